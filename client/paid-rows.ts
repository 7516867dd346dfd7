// `results --format csv|json`: every paid run of an item has a row (docs/costs.md), so the rows' costs
// add up to the spend that `status` shows: beside each item's latest row, the earlier rows of the
// job's manifest that charged something (a render a later one replaced after a prompt edit, a failed
// create retried, an item since removed from the job file), marked `replaced`.
import type { ManifestRow } from '../storage/manifest';
import { rowCharges, rowRunId } from '../storage/spend-rows';

export type ResultRow<T extends ManifestRow> = T | (ManifestRow & { replaced: true });

/** `shown` (the latest row per item, as results lists them) and every other paid row of `everyRow`, each run once, in manifest order. */
export function withReplacedPaidRows<T extends ManifestRow>(shown: readonly T[], everyRow: readonly ManifestRow[]): ResultRow<T>[] {
  const listed = new Set(shown.map(rowRunId));
  const replaced: ResultRow<T>[] = [];
  for (const row of everyRow) {
    const id = rowRunId(row);
    if (listed.has(id) || !rowCharges(row).some((c) => c.usd > 0)) continue;
    listed.add(id);
    replaced.push({ ...row, replaced: true });
  }
  return [...shown, ...replaced];
}
