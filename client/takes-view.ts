// The takes of a job's items as `results` shows them (docs/takes.md): every take beside its item,
// the picks of picks.jsonl on them, and `results --kept`, the kept takes' files for the next step.
import { join } from 'node:path';
import type { Plan } from '../jobfile/plan';
import { baseKeyOf, takeOfKey } from '../jobfile/takes';
import { type ManifestRow, latestRowByKey } from '../storage/manifest';
import { readFilmRecords } from '../storage/films';
import { readPicks, renderKey, StandingPicks } from '../storage/picks';
import type { Storage } from '../storage/storage';
import { readManifestRows } from './manifest-rows';

/** A manifest row with the standing pick of its take, when there is one. */
export type TakeRow = ManifestRow & { pick?: 'keep' | 'reject' };

/**
 * The plan's rows with the takes the plan does not name (made by `run --redo`/`--only`) beside
 * their item, ordered by item then take, each with its pick.
 */
export async function rowsWithTakes(plan: Plan, planRows: readonly ManifestRow[], storage: Storage): Promise<TakeRow[]> {
  const manifest = await readManifestRows(storage);
  const latest = latestRowByKey(manifest);
  const shown = new Set(planRows.map((row) => row.key));
  const extra = takesMadeByRedo(plan, latest).filter((row) => !shown.has(row.key));
  // A pick is the render's that was seen: a take rendered again since starts unpicked (docs/takes.md).
  const picks = StandingPicks.of(await readPicks(storage), manifest);
  const takeOf = (row: ManifestRow) => row.take ?? takeOfKey(row.key);
  return [...planRows, ...extra]
    .sort((a, b) => a.index - b.index || baseKeyOf(a.key).localeCompare(baseKeyOf(b.key)) || takeOf(a) - takeOf(b))
    .map((row) => {
      const pick = picks.of(row);
      return pick && pick.verdict !== 'clear' ? { ...row, pick: pick.verdict } : row;
    });
}

/** The latest rows of takes the plan does not name, of its items: those `run --redo`/`--only` made. */
export function takesMadeByRedo(plan: Plan, latest: ReadonlyMap<string, ManifestRow>): ManifestRow[] {
  const planned = new Set(plan.items.map((item) => item.key));
  const bases = new Set(plan.items.map((item) => baseKeyOf(item.key)));
  return [...latest.values()].filter((row) => !planned.has(row.key) && bases.has(baseKeyOf(row.key)));
}

/** STATE as the table shows it: the pick beside the state (`succeeded, kept`). */
export function stateWithPick(row: TakeRow): string {
  return row.pick === 'keep' ? `${row.state}, kept` : row.pick === 'reject' ? `${row.state}, rejected` : row.state;
}

/**
 * The files a person kept: every stored render whose standing pick is `keep`, the current render
 * of its take or one a changed request has since rendered again beside it (the kept file is still
 * there, never overwritten). In item order, then take, each once; where each is (a path, or an
 * s3:// address).
 */
export function keptFiles(manifest: readonly ManifestRow[], picks: StandingPicks, location: string): Array<{ key: string; path: string }> {
  const kept = new Map<string, ManifestRow>();
  for (const row of manifest) {
    if (row.state === 'succeeded' && row.file && picks.of(row)?.verdict === 'keep') kept.set(renderKey(row), row);
  }
  const takeOf = (row: ManifestRow) => row.take ?? takeOfKey(row.key);
  return [...kept.values()]
    .sort((a, b) => a.index - b.index || baseKeyOf(a.key).localeCompare(baseKeyOf(b.key)) || takeOf(a) - takeOf(b))
    .map((row) => ({ key: row.key, path: location.startsWith('s3://') ? `${location}${row.file}` : join(location, row.file as string) }));
}

/** `results --kept` of a job's output location. */
export async function keptFilesOf(storage: Storage): Promise<Array<{ key: string; path: string }>> {
  const manifest = await readManifestRows(storage);
  return keptFiles(manifest, StandingPicks.of(await readPicks(storage), manifest), storage.location);
}

/** A film as `results --kept` lists it (docs/chains.md): what a next step needs of it. */
export interface KeptFilm {
  film: string;
  path: string;
  clips: string[];
  duration_sec: number;
  bytes: number;
  sha256: string;
}

/** The job's assembled films (storage/films.ts), where each is. */
export async function keptFilmsOf(storage: Storage): Promise<KeptFilm[]> {
  const location = storage.location;
  return (await readFilmRecords(storage)).map((film) => ({
    film: film.name,
    path: location.startsWith('s3://') ? `${location}${film.file}` : join(location, film.file),
    clips: film.clips.map((c) => c.key),
    duration_sec: film.duration_sec,
    bytes: film.bytes,
    sha256: film.sha256,
  }));
}
