// What a manifest row may add to a job's spend (docs/costs.md). The manifest is the output location's
// ledger of what each run of an item cost, but it is a file in a folder someone may have handed the
// user: its amounts are believed only as amounts reelflow writes, finite numbers 0 or more. So
// nothing in the folder can lower the spend that a budget counts, only add to it: a row that is not
// reelflow's kind of amount is skipped (and named), and a row can take the place of a paid prompt
// rewrite the records keep only by counting at least as much.
import type { ManifestRow } from './manifest';

/** An amount as reelflow records one: a finite number, 0 or more. */
export function isRecordedAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

const COST_FIELDS = ['cost_usd', 'rewrite_cost_usd'] as const;
type CostField = (typeof COST_FIELDS)[number];

/** A cost field of a row that holds something other than an amount. */
export interface UntrustedCost {
  /** The row's place among the rows read (0-based). */
  index: number;
  key: string;
  field: CostField;
  value: unknown;
}

/** The row's create and rewrite costs where they are amounts; a field that is not one counts as absent. */
export function trustedCosts(row: Pick<ManifestRow, CostField>): { costUsd?: number; rewriteCostUsd?: number } {
  return {
    ...(isRecordedAmount(row.cost_usd) ? { costUsd: row.cost_usd } : {}),
    ...(isRecordedAmount(row.rewrite_cost_usd) ? { rewriteCostUsd: row.rewrite_cost_usd } : {}),
  };
}

/** Every cost field present that is not an amount (a string, a negative number, an infinite one). */
export function untrustedCosts(rows: readonly Pick<ManifestRow, 'key' | CostField>[]): UntrustedCost[] {
  const found: UntrustedCost[] = [];
  rows.forEach((row, index) => {
    for (const field of COST_FIELDS) {
      const value: unknown = row[field];
      if (value !== undefined && !isRecordedAmount(value)) found.push({ index, key: String(row.key), field, value });
    }
  });
  return found;
}

/** `cost_usd -1000`, `cost_usd "-1000"`: the value as found, short (a planted one may be anything). */
export function untrustedCostText(cost: Pick<UntrustedCost, 'field' | 'value'>): string {
  const shown = typeof cost.value === 'number' ? String(cost.value) : (JSON.stringify(cost.value) ?? String(cost.value));
  return `${cost.field} ${shown.length > 40 ? `${shown.slice(0, 40)}…` : shown} is not an amount reelflow records (a number 0 or more): not counted as spent`;
}
