// What a job has spent, for its job.ended event (docs/notifications.md): the job's spend ledger
// (storage/manifest/spend-rows.ts), every paid call of every run, the same figure `status` shows, whether or
// not the job has a budget. Read once when the job ends.
import type { OutputSettings } from '../jobfile/plan';
import { RewriteStore, unrecordedRewrites } from '../storage/records/rewrites';
import { ledger, totalUsd } from '../storage/manifest/spend-rows';
import { storageFor } from './context';

export async function jobSpendUsd(input: { output: OutputSettings; enhance: boolean }): Promise<number> {
  const storage = storageFor(input.output);
  const { rows } = await storage.readManifest();
  // Rewrites paid that no row counts (an item left not started, say) are spent too, as status counts them.
  const unrecorded = input.enhance ? await unrecordedRewrites(new RewriteStore(storage), rows) : [];
  return totalUsd(ledger(rows, unrecorded));
}
