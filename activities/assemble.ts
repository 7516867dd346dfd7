// assembleFilm: cuts one `assemble:` entry's clips into a film stored beside the job's videos
// (docs/chains.md, "Assembly"). Safe to retry at any point: the film lands whole or not at all
// (storage's part and rename), and its record is written only after it; a retry that finds the
// record and the film as recorded makes nothing.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Context } from '@temporalio/activity';
import type { AssemblySpec } from '../jobfile/chains';
import type { OutputSettings } from '../jobfile/plan';
import { baseKeyOf, takeOfKey } from '../jobfile/takes';
import { DEFAULT_MAX_VIDEO_BYTES } from '../jobfile/values';
import { assembleClips, type AssemblyMethod } from '../media/assemble';
import { filmClipsDigest, readFilmRecord, writeFilmRecord, type FilmClip } from '../storage/records/films';
import { hashFile } from '../storage/local';
import { latestRowByKey, type ManifestRow } from '../storage/manifest/row';
import { readPicks, StandingPicks } from '../storage/records/picks';
import type { Storage } from '../storage/storage';
import { storageFor } from './context';
import { FailureType } from '../domain/failures';
import { finalFailure, translated } from './failures';

/** The longest one ffmpeg run of an assembly may take; the activity's own timeout is above it (workflows/assemble.ts). */
export const ASSEMBLY_FFMPEG_TIMEOUT_MS = 90 * 60_000;
const HEARTBEAT_EVERY_MS = 10_000;

export interface AssembleInput {
  output: OutputSettings;
  assembly: AssemblySpec;
}

/** What became of one film: made now, already made from the same clips, or not made (and why). */
export type FilmOutcome =
  | {
      name: string;
      state: 'made' | 'unchanged';
      file: string;
      bytes: number;
      sha256: string;
      durationSec: number;
      method: AssemblyMethod;
    }
  | {
      name: string;
      state: 'not_made';
      /** The first clip that has not succeeded, and its state (`missing`: no row at all). */
      clip: { key: string; state: string };
      reason: string;
    };

/** The first kept take (take order) of each shot that has one, by the shot's key without its take. */
function keptTakes(latest: ReadonlyMap<string, ManifestRow>, picks: StandingPicks): Map<string, string> {
  const kept = new Map<string, ManifestRow>();
  for (const row of latest.values()) {
    if (row.state !== 'succeeded' || !row.file || picks.of(row)?.verdict !== 'keep') continue;
    const shot = baseKeyOf(row.key);
    const earlier = kept.get(shot);
    if (!earlier || (row.take ?? takeOfKey(row.key)) < (earlier.take ?? takeOfKey(earlier.key))) kept.set(shot, row);
  }
  return new Map([...kept].map(([shot, row]) => [shot, row.key]));
}

export function filmFileName(name: string): string {
  return `${name}.mp4`;
}

export function assembleFilm(input: AssembleInput): Promise<FilmOutcome> {
  return translated(async () => {
    const context = Context.current();
    const beat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
    try {
      return await assemble(input, storageFor(input.output), context.cancellationSignal);
    } finally {
      clearInterval(beat);
    }
  });
}

async function assemble(input: AssembleInput, storage: Storage, signal: AbortSignal): Promise<FilmOutcome> {
  const { assembly } = input;
  const crossfadeSec = assembly.crossfadeSec ?? 0;
  const file = filmFileName(assembly.name);
  const { rows } = await storage.readManifest();
  // A film never replaces an item's video: storage would let it (the manifest names that file).
  const owner = rows.find((row) => row.file === file);
  if (owner)
    throw finalFailure(
      FailureType.assemblyRefused,
      `film ${assembly.name}: ${file} is the video of item ${owner.key}: name the film otherwise`,
    );
  const latest = latestRowByKey(rows);
  const kept = keptTakes(latest, StandingPicks.of(await readPicks(storage), rows));
  const clips: FilmClip[] = [];
  for (const named of assembly.keys) {
    // The kept take of the shot once picks exist (docs/takes.md), else the take the assembly names.
    const key = kept.get(baseKeyOf(named)) ?? named;
    const row = latest.get(key);
    if (row?.state !== 'succeeded' || !row.file || !row.sha256) {
      const state = row?.state ?? 'missing';
      const why = row ? `ended ${state}` : 'has no row: it was not rendered';
      return { name: assembly.name, state: 'not_made', clip: { key, state }, reason: `clip ${key} ${why}` };
    }
    clips.push({ key, file: row.file, sha256: row.sha256 });
  }
  const digest = filmClipsDigest(clips, crossfadeSec);
  const recorded = await readFilmRecord(storage, assembly.name);
  if (recorded && recorded.clips_digest === digest) {
    const stored = await storage.stat(recorded.file);
    if (stored && stored.bytes === recorded.bytes && (!stored.sha256 || stored.sha256 === recorded.sha256)) {
      const { file: f, bytes, sha256, duration_sec: durationSec, method } = recorded;
      return { name: assembly.name, state: 'unchanged', file: f, bytes, sha256, durationSec, method };
    }
  }
  const work = await mkdtemp(join(tmpdir(), 'reelflow-film-'));
  try {
    const paths: string[] = [];
    for (const [i, clip] of clips.entries()) paths.push(await clipOnDisk(storage, clip, join(work, `clip-${i}.mp4`)));
    const out = join(work, 'film.mp4');
    const maxBytes = input.output.maxBytes ?? DEFAULT_MAX_VIDEO_BYTES;
    const film = await assembleClips(paths, out, { crossfadeSec, timeoutMs: ASSEMBLY_FFMPEG_TIMEOUT_MS, maxBytes, signal }).catch(
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        throw finalFailure(FailureType.assemblyRefused, `film ${assembly.name}: ${message}`);
      },
    );
    const written = await storage.write(file, createReadStream(out), { maxBytes, overwrite: input.output.overwrite === true });
    await writeFilmRecord(storage, {
      version: 1,
      name: assembly.name,
      file: written.name,
      bytes: written.bytes,
      sha256: written.sha256,
      duration_sec: film.durationSec,
      method: film.method,
      crossfade_sec: crossfadeSec,
      clips,
      clips_digest: digest,
      made_at: new Date().toISOString(),
    });
    return {
      name: assembly.name,
      state: 'made',
      file: written.name,
      bytes: written.bytes,
      sha256: written.sha256,
      durationSec: film.durationSec,
      method: film.method,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * A path ffmpeg can read holding the clip, checked against its row's sha256: local storage's own
 * file, or a copy of the S3 object. A clip whose bytes are not its row's is refused, naming it.
 */
async function clipOnDisk(storage: Storage, clip: FilmClip, copyTo: string): Promise<string> {
  let path: string;
  if (storage.localPath) {
    path = storage.localPath(clip.file);
  } else {
    const stored = await storage.stat(clip.file);
    const body = stored && stored.bytes > 0 ? await storage.readObject?.(clip.file, { start: 0, end: stored.bytes - 1 }) : undefined;
    if (!body) throw finalFailure(FailureType.assemblyRefused, `clip ${clip.key}: ${clip.file} is not stored any more`);
    await pipeline(body, createWriteStream(copyTo));
    path = copyTo;
  }
  const actual = await hashFile(path).catch(() => undefined);
  if (actual !== clip.sha256) {
    throw finalFailure(
      FailureType.assemblyRefused,
      `clip ${clip.key}: ${clip.file} is not the video its manifest row records (sha256 differs, or it is gone)`,
    );
  }
  return path;
}
