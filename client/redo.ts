// `run --redo rejected|failed` and `run --only ID[,ID]` (docs/takes.md): which takes to render anew.
// Each chosen take gets a new take of its item beside it (the next free take number: a new key, a
// new name, a new seed), so nothing already stored is ever written over. A rejected or failed take
// that a redo already answered is not redone again: running the same command twice makes no more
// takes, and a redo that was stopped (canceled, its row written) is taken up where it was.
import { formatJobFileError, loadJobFile, type UserPrices } from '../jobfile';
import type { FileAccess } from '../jobfile/context';
import type { Plan } from '../jobfile/plan';
import { nearest } from '../jobfile/text';
import { type RedoTake, baseKeyOf, takeOfKey } from '../jobfile/takes';
import { isJobWideKind } from '../domain/failures';
import { type ManifestRow, latestRowByKey } from '../storage/manifest/row';
import { readPicks, StandingPicks } from '../storage/records/picks';
import type { Storage } from '../storage/storage';
import { describeChangedStarts, startsChangedByRedo } from './chain-redo';
import { UsageError } from './errors';
import { readManifestRows } from './manifest-rows';

export type RedoWhich = 'rejected' | 'failed';

/** Takes one redo run may render: each travels with every page of the plan (docs/takes.md). */
export const MAX_REDO_TAKES = 1_000;

export interface RedoChoice {
  redo?: RedoWhich;
  /** `--only`: item ids or take keys; alone, a new take of each; with `redo`, only its takes among them. */
  only?: string[];
}

export interface RedoPlan {
  takes: RedoTake[];
  /** Chosen takes whose item the job file no longer has: left alone, counted for the note. */
  gone: number;
}

export function parseRedoWhich(value: string): RedoWhich {
  if (value === 'rejected' || value === 'failed') return value;
  throw new UsageError(`--redo takes rejected or failed, got "${value}"`);
}

export function parseOnly(value: string, previous: string[] = []): string[] {
  const ids = value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (ids.length === 0) throw new UsageError('--only takes item ids or keys, separated by commas: --only shoe-red,hat');
  return [...previous, ...ids];
}

/** The new takes a redo run renders, from the full plan, the manifest and (for rejected) the picks. */
export async function chooseRedoTakes(plan: Plan, storage: Storage, choice: RedoChoice): Promise<RedoPlan> {
  const rows = await readManifestRows(storage);
  const latest = latestRowByKey(rows);
  const bases = new Set(plan.items.map((item) => baseKeyOf(item.key)));
  const lastTake = new Map<string, number>();
  const noteTake = (key: string, take: number) => {
    const base = baseKeyOf(key);
    lastTake.set(base, Math.max(lastTake.get(base) ?? 0, take));
  };
  for (const item of plan.items) noteTake(item.key, item.take ?? 1);
  for (const row of latest.values()) noteTake(row.key, row.take ?? takeOfKey(row.key));
  const takes: RedoTake[] = [];
  const next = (of: string): RedoTake => {
    const base = baseKeyOf(of);
    const take = (lastTake.get(base) ?? 1) + 1;
    lastTake.set(base, take);
    return { of, take };
  };
  let gone = 0;
  const only = choice.only ? onlyBases(plan, latest, choice.only) : undefined;
  if (only && !choice.redo) {
    for (const base of only) takes.push(next(latestTakeKey(base, latest)));
  }
  if (choice.redo) {
    const chosen = choice.redo === 'rejected' ? await rejectedKeys(storage, rows, latest) : failedKeys(latest);
    const answers = answeringRows(latest);
    for (const key of chosen) {
      // With --only too: the chosen takes of those items alone.
      if (only && !only.includes(baseKeyOf(key))) continue;
      if (!bases.has(baseKeyOf(key))) {
        gone++;
        continue;
      }
      const answer = answers.get(key);
      if (!answer) takes.push(next(key));
      else if (!ended(answer)) takes.push({ of: key, take: answer.take ?? takeOfKey(answer.key) });
    }
  }
  if (takes.length > MAX_REDO_TAKES) {
    throw new UsageError(
      `${takes.length} takes to render anew; at most ${MAX_REDO_TAKES} per run: choose fewer with --only ID[,ID], or run again after this many`,
    );
  }
  return { takes, gone };
}

/** The first-take keys `--only` names: an id names all of its item's matrix values, a key its own item. */
function onlyBases(plan: Plan, latest: ReadonlyMap<string, ManifestRow>, only: readonly string[]): string[] {
  const chosen: string[] = [];
  const unknown: string[] = [];
  for (const wanted of only) {
    const byId = plan.items.filter((item) => item.id === wanted).map((item) => baseKeyOf(item.key));
    const byKey = plan.items.some((item) => item.key === wanted) || latest.has(wanted) ? [baseKeyOf(wanted)] : [];
    const found = byId.length > 0 ? byId : byKey.filter((base) => plan.items.some((item) => baseKeyOf(item.key) === base));
    if (found.length === 0) unknown.push(wanted);
    for (const base of found) if (!chosen.includes(base)) chosen.push(base);
  }
  if (unknown.length > 0) {
    // Takes and matrix values share their item's id: each id is named once.
    const ids = [...new Set(plan.items.map((item) => item.id ?? item.key))];
    const hint = unknown.length === 1 ? nearest(unknown[0] ?? '', ids) : undefined;
    const some = ids.length <= 8 ? ids.join(', ') : `${ids.slice(0, 8).join(', ')}, ... (${ids.length} in all)`;
    throw new UsageError(
      `--only: no item of this job has the id or key ${unknown.map((u) => `"${u}"`).join(', ')}` +
        (hint ? `; did you mean "${hint}"?` : ` (the job's ids: ${some})`),
    );
  }
  return chosen;
}

/** The key of an item's latest take that has a row (the first take when none has). */
function latestTakeKey(base: string, latest: ReadonlyMap<string, ManifestRow>): string {
  let best = base;
  let bestTake = 0;
  for (const row of latest.values()) {
    const take = row.take ?? takeOfKey(row.key);
    if (baseKeyOf(row.key) === base && take > bestTake) [best, bestTake] = [row.key, take];
  }
  return best;
}

/** Takes whose current render is rejected (a take rendered again since its reject is unpicked: docs/takes.md). */
async function rejectedKeys(storage: Storage, rows: readonly ManifestRow[], latest: ReadonlyMap<string, ManifestRow>): Promise<string[]> {
  const picks = StandingPicks.of(await readPicks(storage), rows);
  return [...latest.values()].filter((row) => picks.of(row)?.verdict === 'reject').map((row) => row.key);
}

/** Takes whose latest row failed or timed out (not an item stopped by a job-wide cause: a plain run continues those). */
function failedKeys(latest: ReadonlyMap<string, ManifestRow>): string[] {
  return [...latest.values()]
    .filter((row) => (row.state === 'failed' || row.state === 'timed_out') && !isJobWideKind(row.error?.kind))
    .map((row) => row.key);
}

/** Per redone take, the latest row of the take made for it. */
function answeringRows(latest: ReadonlyMap<string, ManifestRow>): Map<string, ManifestRow> {
  const answers = new Map<string, ManifestRow>();
  for (const row of latest.values()) if (row.redo_of !== undefined) answers.set(row.redo_of, row);
  return answers;
}

/** Whether a take's row says it is over (a canceled or blocked take, or one a job-wide cause stopped, is continued). */
function ended(row: ManifestRow): boolean {
  return row.state !== 'canceled' && row.state !== 'blocked' && !isJobWideKind(row.error?.kind);
}

/**
 * The plan of a redo run: the new takes alone (their keys, names and seeds as the job file expands
 * them), or undefined when there is nothing to redo (said on stderr).
 */
export async function redoRunPlan(
  plan: Plan,
  storage: Storage,
  choice: RedoChoice,
  files: FileAccess,
  prices: UserPrices,
  note: (line: string) => void,
  /** The folders outside its own the user lets the job read (client/read-allowance.ts). */
  allowRead: readonly string[],
): Promise<{ plan: Plan; takes: RedoTake[] } | undefined> {
  const { takes, gone } = await chooseRedoTakes(plan, storage, choice);
  if (gone > 0) note(`${gone} chosen take${gone === 1 ? ' is' : 's are'} of items the job file no longer has: left alone`);
  if (takes.length === 0) {
    note(`${plan.job}: nothing to redo (${choice.redo ? `no ${choice.redo} take without a new take` : 'no take chosen'})`);
    return undefined;
  }
  note(`${plan.job}: ${takes.length} new take${takes.length === 1 ? '' : 's'} (${describeChoice(choice)}); nothing stored is replaced`);
  // Shots that continue a redone one start from a different frame now: said, not rendered (docs/chains.md).
  const redone = takes.map((t) => baseKeyOf(t.of));
  for (const line of describeChangedStarts(startsChangedByRedo(plan.items, redone, plan.pricing ?? {}))) note(line);
  // The same file as read a moment ago: it expands again, with the new takes alone.
  const result = await loadJobFile(plan.jobFile, { runDate: plan.runDate, files, ...prices, redo: takes, allowRead });
  if (!result.ok) throw new UsageError(result.errors.map((e) => formatJobFileError(e)).join('\n'));
  return { plan: result.plan, takes };
}

/** The flags of a redo run (`--redo rejected --only hat`): the same command takes it up again (docs/takes.md). */
export function describeChoice(choice: RedoChoice): string {
  const parts = [choice.redo ? `--redo ${choice.redo}` : '', choice.only ? `--only ${choice.only.join(',')}` : ''];
  return parts.filter((p) => p !== '').join(' ');
}
