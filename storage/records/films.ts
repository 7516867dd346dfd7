// The record of each assembled film (docs/chains.md, "Assembly"): one JSON record per film under
// `.reelflow/films/`, beside the manifest rather than in it. A film is not an item: a manifest row
// for it would be counted, retried and picked as an item by every reader of the manifest there is,
// older releases included; a record of its own leaves them all as they were, and says what an item
// row cannot (its clips, in order, and the digest that decides whether it is made again).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { objectNameProblem } from '../objects/names';
import type { RecordStore } from './store';

export const FILMS_FOLDER = 'films';
/** A film record is small: its clips' keys and digests. */
const MAX_FILM_RECORD_BYTES = 1 << 20;
/** Written into each record; a reader refuses records of a later version (it cannot know their fields). */
export const FILM_RECORD_VERSION = 1;

export interface FilmClip {
  key: string;
  file: string;
  sha256: string;
}

export interface FilmRecord {
  version: number;
  name: string;
  /** The film's object name at the output location (`<name>.mp4`). */
  file: string;
  bytes: number;
  sha256: string;
  /** The film's length as ffprobe reads it, seconds. */
  duration_sec: number;
  /** `stream_copy` when the clips agreed and no crossfade was asked for, else `re_encode`. */
  method: 'stream_copy' | 're_encode';
  crossfade_sec: number;
  clips: FilmClip[];
  /** filmClipsDigest(clips, crossfade_sec): the film is made again only when it changes. */
  clips_digest: string;
  made_at: string;
}

const sha = z.string().regex(/^[0-9a-f]{64}$/);
const objectName = z.string().superRefine((name, ctx) => {
  const problem = objectNameProblem(name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
const filmRecordSchema = z.looseObject({
  version: z.literal(FILM_RECORD_VERSION),
  name: z.string().min(1),
  file: objectName,
  bytes: z.number().int().nonnegative(),
  sha256: sha,
  duration_sec: z.number().nonnegative(),
  method: z.enum(['stream_copy', 're_encode']),
  crossfade_sec: z.number().nonnegative(),
  clips: z.array(z.object({ key: z.string(), file: objectName, sha256: sha })),
  clips_digest: sha,
  made_at: z.string(),
});

/** What decides whether a film is made again: its clips' contents, in order, and the crossfade. */
export function filmClipsDigest(clips: readonly Pick<FilmClip, 'key' | 'sha256'>[], crossfadeSec: number): string {
  const what = JSON.stringify({ v: FILM_RECORD_VERSION, crossfadeSec, clips: clips.map((c) => [c.key, c.sha256]) });
  return createHash('sha256').update(what).digest('hex');
}

/** The record's name under `.reelflow/`: one per film name. */
export function filmRecordName(name: string): string {
  return `${FILMS_FOLDER}/${encodeURIComponent(name)}.json`;
}

export function decodeFilmRecord(text: string): FilmRecord | undefined {
  try {
    const parsed = filmRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? (parsed.data as FilmRecord) : undefined;
  } catch {
    return undefined;
  }
}

export async function readFilmRecord(storage: RecordStore, name: string): Promise<FilmRecord | undefined> {
  const text = await storage.getRecord(filmRecordName(name), MAX_FILM_RECORD_BYTES);
  return text === undefined ? undefined : decodeFilmRecord(text);
}

export function writeFilmRecord(storage: RecordStore, record: FilmRecord): Promise<void> {
  return storage.putRecord(filmRecordName(record.name), `${JSON.stringify(record, null, 2)}\n`);
}

/** Every film recorded at the output location, in name order; a record that is not one is left out. */
export async function readFilmRecords(storage: RecordStore): Promise<FilmRecord[]> {
  const films: FilmRecord[] = [];
  for (const name of await storage.listRecords(FILMS_FOLDER)) {
    const text = await storage.getRecord(name, MAX_FILM_RECORD_BYTES);
    const record = text === undefined ? undefined : decodeFilmRecord(text);
    if (record) films.push(record);
  }
  return films;
}
