// The latest manifest row per key of one output location, as the plan's pages need it
// (activities/plan.ts), kept between pages and brought up to date with only the rows appended since
// (reading the whole manifest for every page of 100 items made a job's reads quadratic). A row is
// kept compact (docs/worker-memory.md): only what deciding an item needs, the prompt as its
// digest; and once the job's pages have gone past an item, its rows are no longer kept at all (only
// its key), so a worker's memory does not grow with the job.
import { createHash } from 'node:crypto';
import type { RenderRequest } from '../jobfile/plan';
import { requestChanged, type ManifestRow } from '../storage/manifest/row';
import type { SkippedRow } from '../storage/manifest/codec';
import type { ManifestCursor } from '../storage/manifest/log';
import type { Storage } from '../storage/storage';

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
  /** The latest row per key, but for the keys passed. */
  rows: Map<string, KnownRow>;
  /** Per key, the first succeeded row with a file: the render that holds the item's plain output name. */
  firstFiles: Map<string, KnownRow>;
  /** Keys of the items the job's pages have gone past: their rows are dropped, and later ones ignored. */
  passed: Set<string>;
  /** The one job (plan digest) reading this location, or `many`: then nothing is passed. */
  reader: string | undefined;
  /** The furthest page the reader has asked for. */
  offset: number;
  /** The last page decided: its keys are passed once a page after it is asked for. */
  lastPage: { offset: number; keys: string[] } | undefined;
  /** Lines this read found not to be rows (storage/manifest/codec.ts), each told once per reading of the manifest. */
  skipped: SkippedRow[];
  /** Where each line told of is (`file:line`). */
  told: Set<string>;
}

/** Which page of which job asks (readPlanItems' digest and offset). */
export interface PageAsk {
  digest: string;
  offset: number;
}

const MANY = 'many';

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
  latest(storage: Storage, ask: PageAsk): Promise<Followed> {
    const next = this.turn.then(() => this.catchUp(storage, ask));
    this.turn = next.catch(() => undefined);
    return next;
  }

  /**
   * The page at `offset` is decided. Its keys are passed when a later page of the same job is asked
   * for: the same page asked again (an activity's retry) still finds its rows.
   */
  decided(followed: Followed, ask: PageAsk, keys: string[]): void {
    if (followed.reader === ask.digest) followed.lastPage = { offset: ask.offset, keys };
  }

  private async catchUp(storage: Storage, ask: PageAsk): Promise<Followed> {
    let before = this.followed?.location === storage.location ? this.followed : undefined;
    let reader = ask.digest;
    if (before && before.reader !== ask.digest) {
      // Another job reads this location too: nothing is passed from now on, and what was is read
      // again (that job has not gone past those items).
      reader = MANY;
      if (before.passed.size > 0) before = undefined;
      else before.reader = MANY;
    } else if (before && ask.offset < before.offset && before.passed.size > 0) {
      // The same job from an earlier page: a new run, which needs every row again.
      before = undefined;
    }
    const page = await storage.readManifestSince(before?.cursor);
    // A new map, never a cleared one: a caller may still be reading the previous one.
    const followed: Followed =
      before && !page.fromStart
        ? before
        : {
            location: storage.location,
            cursor: undefined,
            rows: new Map(),
            firstFiles: new Map(),
            passed: new Set(),
            reader,
            offset: ask.offset,
            lastPage: undefined,
            skipped: [],
            told: new Set(),
          };
    // A torn last line is read again (and told of once) until its writer ends it.
    followed.skipped = page.skipped.filter((s) => !followed.told.has(s.where));
    for (const s of followed.skipped) followed.told.add(s.where);
    followed.offset = Math.max(followed.offset, ask.offset);
    const last = followed.lastPage;
    if (followed.reader === ask.digest && last && ask.offset > last.offset) {
      for (const key of last.keys) {
        followed.passed.add(key);
        followed.rows.delete(key);
        followed.firstFiles.delete(key);
      }
      followed.lastPage = undefined;
    }
    for (const row of page.rows) {
      if (followed.passed.has(row.key)) continue;
      const kept = known(row);
      followed.rows.set(row.key, kept);
      if (row.state === 'succeeded' && row.file && !followed.firstFiles.has(row.key)) followed.firstFiles.set(row.key, kept);
    }
    followed.cursor = page.cursor;
    this.followed = followed;
    return followed;
  }
}
