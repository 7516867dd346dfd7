// Money, in USD: how an amount is rounded, which amounts a record may add to a spend, and what one
// run of an item charged. The budget (workflows/job.ts), the display (client/spend.ts) and the metrics
// (through storage/manifest/spend-rows.ts) count an item's charge this one way (docs/costs.md).

/** USD rounded to a millionth of a dollar, so sums of prices such as 0.1 stay exact enough to compare: every amount reelflow computes, records and shows. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

/**
 * An amount as reelflow records one: a finite number, 0 or more. A manifest is a file in a folder
 * someone may have handed the user: nothing else in it counts, so nothing planted there lowers a spend.
 */
export function isRecordedAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * What one run of an item charged: its create's amount (billed or estimated) and its prompt
 * rewrite's, together; undefined when it records neither.
 */
export function itemChargeUsd(charge: { createUsd?: number; rewriteUsd?: number }): number | undefined {
  const { createUsd, rewriteUsd } = charge;
  if (createUsd === undefined && rewriteUsd === undefined) return undefined;
  return roundUsd((createUsd ?? 0) + (rewriteUsd ?? 0));
}
