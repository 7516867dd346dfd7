// An output location belongs to one job (docs/reruns.md): the first run leaves a small marker there
// naming the job, and a run of another job is refused before anything starts, so that it cannot take
// over the first job's results (same item ids, same names, one manifest). The marker is one of the
// location's records (`.reelflow/owner.json`, Storage.putRecord): written whole, never through a
// link, and never listed as an output.
import type { ObjectStore } from '../objects/store';
import type { RecordStore } from './store';

/** The marker's record name (under the location's `.reelflow/`). */
export const OWNER_RECORD = 'owner.json';
const MAX_OWNER_BYTES = 4096;

export interface OutputOwner {
  /** The job's name (its file's `name:`). */
  job: string;
  /** The job's Temporal workflow id (workflows/ids.ts). */
  workflowId: string;
}

export function encodeOwner(owner: OutputOwner): string {
  return `${JSON.stringify({ job: owner.job, workflowId: owner.workflowId })}\n`;
}

/** The marker's owner; undefined for text that is not one (then the location counts as unclaimed). */
export function decodeOwner(text: string): OutputOwner | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<OutputOwner>;
    if (typeof parsed.job === 'string' && typeof parsed.workflowId === 'string') return { job: parsed.job, workflowId: parsed.workflowId };
  } catch {
    // Not JSON: treated as no marker, and replaced.
  }
  return undefined;
}

/** Another job already owns the output location. */
export class OutputOwnedError extends Error {
  override readonly name = 'OutputOwnedError';
  constructor(
    readonly location: string,
    readonly owner: OutputOwner,
    readonly claimant: OutputOwner,
  ) {
    super(
      `the output location ${location} belongs to job "${owner.job}" (workflow ${owner.workflowId}); ` +
        `job "${claimant.job}" may not write there: give it an output.dir (or output.s3.prefix) of its own`,
    );
  }
}

/**
 * Claims the location for `claimant` on its first run (leaves the marker), or confirms it is its
 * own; throws OutputOwnedError when the marker names another job. A job is its name: its workflow
 * id is recorded for people (a scheduled run's id carries its start time).
 */
export async function claimOutput(storage: RecordStore & Pick<ObjectStore, 'location'>, claimant: OutputOwner): Promise<void> {
  const text = await storage.getRecord(OWNER_RECORD, MAX_OWNER_BYTES);
  const owner = text === undefined ? undefined : decodeOwner(text);
  if (owner && owner.job !== claimant.job) {
    throw new OutputOwnedError(storage.location, owner, claimant);
  }
  if (!owner) await storage.putRecord(OWNER_RECORD, encodeOwner(claimant));
}
