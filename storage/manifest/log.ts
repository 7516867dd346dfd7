// The manifest log: one row per item as it ends, appended by any number of workers, read whole or
// from a cursor, and left as one manifest.jsonl when a job ends (docs/files.md). Local: one file
// appended in place (local.ts); S3: one object per row and a snapshot (s3.ts, manifest/snapshot.ts).
import type { SkippedRow } from './codec';
import type { ManifestRow } from './row';

declare const manifestCursor: unique symbol;

/** Where a reader of a manifest got to. Opaque: only the storage that made it looks inside. */
export type ManifestCursor = { readonly [manifestCursor]: true };

/** Manifest rows as read, and the rows left out as not rows reelflow writes (storage/manifest/codec.ts): where, and why. */
export interface ManifestRead {
  rows: ManifestRow[];
  skipped: SkippedRow[];
}

export interface ManifestPage extends ManifestRead {
  fromStart: boolean;
  cursor: ManifestCursor | undefined;
}

/** Where a snapshot was left and how many items it lists. */
export interface ManifestSnapshot {
  location: string;
  items: number;
}

export interface ManifestLog {
  appendManifest(row: ManifestRow): Promise<void>;
  /** Manifest rows in order, and the lines that are not rows (a torn last line among them), skipped. */
  readManifest(): Promise<ManifestRead>;
  /**
   * The rows appended since `cursor`, and the cursor for next time. Without a cursor, or when
   * the manifest was replaced since (or the backend cannot tell), every row, with `fromStart`
   * set: what was read before must then be dropped.
   */
  readManifestSince(cursor: ManifestCursor | undefined): Promise<ManifestPage>;
  /**
   * Leaves the manifest as one `manifest.jsonl` at the output location, for people and tools that
   * read it whole (a job that ends calls it). Local: the file already is that, and is only read.
   * S3: one object of the latest row per item, rebuilt from the row objects.
   */
  snapshotManifest(): Promise<ManifestSnapshot>;
}
