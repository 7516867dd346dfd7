// What a manifest row may add to a job's spend (docs/costs.md). The manifest is the output location's
// ledger of what each run of an item cost, but it is a file in a folder someone may have handed the
// user: its amounts are believed only as amounts reelflow writes, finite numbers 0 or more. So
// nothing in the folder can lower the spend that a budget counts, only add to it: a row that is not
// reelflow's kind of amount counts for nothing (the manifest's decoder skips such a row and names
// it), and a row can take the place of a paid prompt
// rewrite the records keep only by counting at least as much.
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
