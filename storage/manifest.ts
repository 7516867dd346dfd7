// One manifest line per item as it ends (spec/cli.md, "Files a run leaves"). Never the API key.
import type { StoredObject } from './storage';

export type ItemEndState = 'succeeded' | 'failed' | 'timed_out' | 'canceled' | 'unknown';

export interface ManifestRow {
  key: string;
  id: string | null;
  index: number;
  state: ItemEndState;
  model: string;
  protocol: 'general' | 'openai';
  prompt: string;
  /** The prompt after the enhance step, when one ran. */
  enhanced_prompt?: string | null;
  task_id: string | null;
  /** The base address used last for this item (the download's, when there was one). */
  base_url: string | null;
  /** The base address the task was created on (rows from before it have none). */
  create_base_url?: string | null;
  /** The address that served the video: a base address, or a CDN's origin. */
  download_base_url?: string | null;
  created_at: string | null;
  finished_at: string;
  polls: number;
  file: string | null;
  bytes: number | null;
  sha256: string | null;
  error: { kind: string; message: string } | null;
}

/** The latest row of each item key: a re-run appends a new final line, and the last one counts. */
export function latestRowByKey(rows: readonly ManifestRow[]): Map<string, ManifestRow> {
  const latest = new Map<string, ManifestRow>();
  for (const row of rows) latest.set(row.key, row);
  return latest;
}

/**
 * Whether a run that renders again the ended states in `retry` skips the item whose latest row is
 * `row`: it succeeded and its video is still stored as recorded (`stored`: what storage holds under
 * the row's file, asked for only for a succeeded row with a file), or it ended in a state not
 * retried. A canceled item is never done: running the job again continues it.
 */
export function itemIsDone(row: ManifestRow | undefined, retry: ReadonlySet<ItemEndState>, stored: StoredObject | undefined): boolean {
  if (!row) return false;
  if (row.state === 'succeeded' && row.file) {
    return !!stored && stored.bytes === row.bytes && (!stored.sha256 || !row.sha256 || stored.sha256 === row.sha256);
  }
  return row.state !== 'canceled' && !retry.has(row.state);
}
