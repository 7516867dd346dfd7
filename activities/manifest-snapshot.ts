// The manifest as one file at the output location when a job ends (see Storage.snapshotManifest):
// for S3 output, `manifest.jsonl` beside the row objects, so a user can `aws s3 cp` it.
import type { OutputSettings } from '../jobfile/plan';
import type { ManifestSnapshot } from '../storage/manifest/log';
import { storageFor } from './context';
import { translated } from './failures';

export type { ManifestSnapshot };

/** Writes (S3) or checks (local) `manifest.jsonl` at the job's output location. Safe to repeat. */
export function snapshotManifest(input: { output: OutputSettings }): Promise<ManifestSnapshot> {
  return translated(() => storageFor(input.output).snapshotManifest());
}
