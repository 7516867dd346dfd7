// A job's spend, computed in this one place (docs/costs.md) for the budget (activities/plan.ts
// spentBefore), the display (client/spend.ts) and the metrics (activities/metrics.ts): the ledger is
// every paid call, each manifest row's create and prompt rewrite, and the paid rewrite calls no row
// counts (storage/rewrites.ts), each a charge of one model from one source.
//
// What a manifest row may add to a job's spend. The manifest is the output location's
// ledger of what each run of an item cost, but it is a file in a folder someone may have handed the
// user: its amounts are believed only as amounts reelflow writes, finite numbers 0 or more. So
// nothing in the folder can lower the spend that a budget counts, only add to it: a row that is not
// reelflow's kind of amount counts for nothing (the manifest's decoder skips such a row and names
// it), and a row can take the place of a paid prompt
// rewrite the records keep only by counting at least as much.
import { roundUsd } from '../jobfile/prices';
import type { ManifestRow } from './manifest';

/** An amount as reelflow records one: a finite number, 0 or more. */
export function isRecordedAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

type CostField = 'cost_usd' | 'rewrite_cost_usd';

/** The row's create and rewrite costs where they are amounts; a field that is not one counts as absent. */
export function trustedCosts(row: Pick<ManifestRow, CostField>): { costUsd?: number; rewriteCostUsd?: number } {
  return {
    ...(isRecordedAmount(row.cost_usd) ? { costUsd: row.cost_usd } : {}),
    ...(isRecordedAmount(row.rewrite_cost_usd) ? { rewriteCostUsd: row.rewrite_cost_usd } : {}),
  };
}

/** Where an amount comes from: the gateway's figure, a rewrite's token usage, or the estimate. */
export type ChargeSource = 'billed' | 'usage' | 'estimated';

/** One paid call's part of the spend: a create's under its video model, a rewrite's under the enhance model. */
export interface Charge {
  model: string;
  role: 'video' | 'enhance';
  usd: number;
  source: ChargeSource;
}

/** The enhance model's name where none is known (a row of a job whose enhance block is gone). */
export const UNNAMED_ENHANCE_MODEL = 'prompt rewrites';

/**
 * What a row charges: its create (cost_source, billed or estimated) and its prompt rewrite
 * (rewrite_cost_source; rows from before it recorded the estimate). Only amounts count.
 */
export function rowCharges(
  row: Pick<ManifestRow, CostField | 'model' | 'cost_source' | 'rewrite_cost_source'>,
  enhanceModel = UNNAMED_ENHANCE_MODEL,
): Charge[] {
  const { costUsd, rewriteCostUsd } = trustedCosts(row);
  return [
    ...(costUsd !== undefined ? [{ model: row.model, role: 'video' as const, usd: costUsd, source: row.cost_source ?? 'estimated' }] : []),
    ...(rewriteCostUsd !== undefined
      ? [{ model: enhanceModel, role: 'enhance' as const, usd: rewriteCostUsd, source: row.rewrite_cost_source ?? 'estimated' }]
      : []),
  ];
}

/** What a paid rewrite call no row counts charges (storage/rewrites.ts); nothing when it had no price. */
export function callCharges(
  call: { cost_usd?: number; cost_source?: 'usage' | 'estimated' },
  enhanceModel = UNNAMED_ENHANCE_MODEL,
): Charge[] {
  if (!isRecordedAmount(call.cost_usd)) return [];
  return [{ model: enhanceModel, role: 'enhance', usd: call.cost_usd, source: call.cost_source ?? 'estimated' }];
}

type RunFields = 'key' | 'state' | 'finished_at' | 'created_at' | 'task_id' | 'cost_source' | 'rewrite_at';
type LedgerRow = Parameters<typeof rowCharges>[0] & Partial<Pick<ManifestRow, RunFields>>;

/**
 * Which run of an item a row records: its item, its task, when it ended and what it charged. A row
 * written again (a recording repeated after a crash appends the same line) is the same run, paid once.
 */
export function rowRunId(row: Partial<Pick<ManifestRow, RunFields | CostField | 'rewrite_cost_source'>>): string {
  const { key, state, finished_at, created_at, task_id, cost_usd, cost_source, rewrite_cost_usd, rewrite_cost_source, rewrite_at } = row;
  return JSON.stringify([
    key,
    state,
    finished_at,
    created_at,
    task_id,
    cost_usd,
    cost_source,
    rewrite_cost_usd,
    rewrite_cost_source,
    rewrite_at,
  ]);
}

/** The rows, each run of an item once: a row written again by a repeated recording is left out. */
export function eachRunOnce<Row extends LedgerRow>(rows: readonly Row[]): Row[] {
  const seen = new Set<string>();
  return rows.filter((row) => {
    if (row.key === undefined || row.finished_at === undefined) return true;
    const id = rowRunId(row);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** The ledger of a job: its rows' charges (each run of an item once) and those of the paid rewrite calls no row counts. */
export function ledger(
  rows: readonly LedgerRow[],
  calls: readonly Parameters<typeof callCharges>[0][] = [],
  enhanceModel?: string,
): Charge[] {
  return [
    ...eachRunOnce(rows).flatMap((row) => rowCharges(row, enhanceModel)),
    ...calls.flatMap((call) => callCharges(call, enhanceModel)),
  ];
}

/** What charges add up to, USD (rounded to a millionth, as every amount shown). */
export function totalUsd(charges: readonly Charge[]): number {
  return roundUsd(charges.reduce((sum, c) => sum + c.usd, 0));
}
