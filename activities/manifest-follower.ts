// The latest manifest row per key of one output location, as the plan's pages need it
// (activities/plan.ts), kept between pages and brought up to date with only the rows appended since
// (reading the whole manifest for every page of 100 items made a job's reads quadratic). A row is
// kept compact (docs/worker-memory.md): only what deciding an item needs, the prompt as its
// digest, so a worker's memory barely grows with the job.
import { createHash } from 'node:crypto';
import type { RenderRequest } from '../jobfile/plan';
import { requestChanged, type ManifestRow } from '../storage/manifest';
import type { ManifestCursor, Storage } from '../storage/storage';

/** What a page reads of an item's row: ManifestRow's fields of the same names, the prompt as its digest. */
export type KnownRow = Pick<
  ManifestRow,
  | 'key'
  | 'state'
  | 'file'
  | 'bytes'
  | 'sha256'
  | 'request_digest'
  | 'model'
  | 'protocol'
  | 'task_id'
  | 'created_at'
  | 'create_base_url'
  | 'base_url'
  | 'enhanced_prompt'
> & { prompt: string; error: { kind: string; message: string } | null };

export interface Followed {
  location: string;
  cursor: ManifestCursor | undefined;
  /** The latest row per key. */
  rows: Map<string, KnownRow>;
  /** Per key, the first succeeded row with a file: the render that holds the item's plain output name. */
  firstFiles: Map<string, KnownRow>;
}

const promptDigest = (prompt: string): string => createHash('sha256').update(prompt, 'utf8').digest('base64url');

function known(row: ManifestRow): KnownRow {
  const kept: KnownRow = {
    key: row.key,
    state: row.state,
    file: row.file,
    bytes: row.bytes,
    sha256: row.sha256,
    model: row.model,
    protocol: row.protocol,
    prompt: promptDigest(row.prompt),
    task_id: row.task_id,
    created_at: row.created_at,
    base_url: row.base_url,
    // The error's kind decides; its message is not kept.
    error: row.error ? { kind: row.error.kind, message: '' } : null,
  };
  if (row.request_digest !== undefined) kept.request_digest = row.request_digest;
  if (row.create_base_url) kept.create_base_url = row.create_base_url;
  if (row.enhanced_prompt) kept.enhanced_prompt = row.enhanced_prompt;
  return kept;
}

/** requestChanged for a kept row (its prompt is a digest). */
export function changedSince(row: KnownRow, request: RenderRequest, digest: string | undefined): boolean {
  return requestChanged(row, { prompt: promptDigest(request.prompt), model: request.model, protocol: request.protocol }, digest);
}

export class ManifestFollower {
  private followed: Followed | undefined;
  private turn: Promise<unknown> = Promise.resolve();

  /** One location at a time, like the plan cache; calls take turns. */
  latest(storage: Storage): Promise<Followed> {
    const next = this.turn.then(() => this.catchUp(storage));
    this.turn = next.catch(() => undefined);
    return next;
  }

  private async catchUp(storage: Storage): Promise<Followed> {
    const before = this.followed?.location === storage.location ? this.followed : undefined;
    const page = await storage.readManifestSince(before?.cursor);
    // A new map, never a cleared one: a caller may still be reading the previous one. The map in
    // use only ever gains newer rows.
    const followed: Followed =
      before && !page.fromStart ? before : { location: storage.location, cursor: undefined, rows: new Map(), firstFiles: new Map() };
    for (const row of page.rows) {
      const kept = known(row);
      followed.rows.set(row.key, kept);
      if (row.state === 'succeeded' && row.file && !followed.firstFiles.has(row.key)) followed.firstFiles.set(row.key, kept);
    }
    followed.cursor = page.cursor;
    this.followed = followed;
    return followed;
  }
}
