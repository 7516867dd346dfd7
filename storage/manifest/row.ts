// One manifest line per item as it ends (docs/files.md). Never the API key.
import type { ItemEndState } from '../../domain/end-states';
import { isJobWideKind } from '../../domain/failures';
import type { StoredObject } from '../objects/store';

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
  /**
   * Digest of the item's whole request as the plan had it (activities/plan.ts requestDigest): a
   * later run whose request differs renders the item again (docs/reruns.md). Rows from before it have none.
   */
  request_digest?: string;
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
  /**
   * The last frame the gateway handed back with the video (`return_last_frame`), as stored in the
   * job's frame store (docs/chains.md): what a later shot starts from. Absent when none was taken.
   */
  last_frame?: { sha256: string; bytes: number; type: 'png' | 'jpeg' };
  error: { kind: string; message: string } | null;
  /** A `blocked` item's need that did not succeed: the first shot of its chain that did not (docs/chains.md). */
  blocked_by?: string;
  /**
   * What this run of the item cost, USD: the gateway's figure when it reports one (`billed`), else
   * the estimate times the creates that may have been sent (`estimated`); docs/costs.md. Rows from
   * before it have none.
   */
  cost_usd?: number;
  cost_source?: 'billed' | 'estimated';
  /**
   * The prompt rewrite this run of the item paid for (the enhance model's Messages call), USD: its
   * answer's token usage at the model's prices (`usage`), else its estimate, an upper bound
   * (`estimated`; rows from before rewrite_cost_source are all estimates). docs/costs.md. Absent
   * when the rewrite was stored already, or unpriced.
   */
  rewrite_cost_usd?: number;
  rewrite_cost_source?: 'usage' | 'estimated';
  /** The `at` of the rewrite record whose paid call rewrite_cost_usd is (storage/records/rewrites.ts): that call is counted here, not again from the record. */
  rewrite_at?: string;
  /** Which take of its source item this is, 1-based (`variants`, `--redo`; docs/takes.md). Absent: 1. */
  take?: number;
  /** The source item's identity, shared by all its takes and matrix values (the review page groups by it). Absent: `key`. */
  group?: string;
  /** The item's own placeholder values (matrix, items_from columns), as the plan had them. */
  vars?: Record<string, string>;
  /** The key of the take this one was made to replace (`run --redo`, `--only`; docs/takes.md). */
  redo_of?: string;
  /** The seed sent with the create, when one was. */
  seed?: number;
  /** What was asked for, as the plan had it (rows from before these have none). */
  seconds?: number;
  ratio?: string;
  resolution?: string;
}

/** The latest row of each item key: a re-run appends a new final line, and the last one counts. */
export function latestRowByKey(rows: readonly ManifestRow[]): Map<string, ManifestRow> {
  const latest = new Map<string, ManifestRow>();
  for (const row of rows) latest.set(row.key, row);
  return latest;
}

/**
 * Whether `row` was recorded for another request than the item's current one (`digest`: its request
 * digest now; undefined when a local reference's content cannot be known, activities/plan.ts).
 */
export function requestChanged(
  row: Pick<ManifestRow, 'request_digest' | 'prompt' | 'model' | 'protocol'>,
  request: { prompt: string; model: string; protocol: string },
  digest: string | undefined,
): boolean {
  if (row.request_digest !== undefined && digest !== undefined) return row.request_digest !== digest;
  // Rows from before the digest: the prompt, model and protocol are what they can tell.
  return row.prompt !== request.prompt || row.model !== request.model || row.protocol !== request.protocol;
}

/**
 * Whether a run that renders again the ended states in `retry` skips the item whose latest row is
 * `row`: it succeeded and its video is still stored as recorded (`stored`: what storage holds under
 * the row's file, asked for only for a succeeded row with a file), or it ended in a state not
 * retried. Never done: a canceled or blocked item (running the job again continues it), an item that ended by
 * a job-wide cause (a refused key, an unreachable gateway: the next run after the fix continues
 * it), and an item whose request `changed` since its row (a new render).
 */
export function itemIsDone(
  row: Pick<ManifestRow, 'state' | 'file' | 'bytes' | 'sha256' | 'error'> | undefined,
  retry: ReadonlySet<ItemEndState>,
  stored: StoredObject | undefined,
  changed = false,
): boolean {
  if (!row || changed) return false;
  if (row.state === 'succeeded' && row.file) {
    return !!stored && stored.bytes === row.bytes && (!stored.sha256 || !row.sha256 || stored.sha256 === row.sha256);
  }
  // A blocked item was never started: a run continues it once its need succeeds, like a canceled one.
  return row.state !== 'canceled' && row.state !== 'blocked' && !isJobWideKind(row.error?.kind) && !retry.has(row.state);
}
