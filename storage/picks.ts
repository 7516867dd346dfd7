// The user's picks among the takes of a job (docs/takes.md): keep or reject, with an optional note,
// one JSON line per decision, the last line of a take winning. `reelflow review` writes them;
// `run --redo rejected` and `results --kept` read them. Kept as one of the location's records
// (Storage.putRecord: written whole, never through a link), so local and S3 output behave alike.
import type { Storage } from './storage';

export const PICKS_RECORD = 'picks.jsonl';
/** A picks file past this is refused: 200,000 decisions of ~1 KiB. */
export const MAX_PICKS_BYTES = 200 * 1024 * 1024;
/** Characters of a note kept. */
export const MAX_NOTE_CHARS = 2_000;

export type Verdict = 'keep' | 'reject' | 'clear';

export interface Pick {
  /** The take's item key (a manifest row's `key`). */
  key: string;
  verdict: Verdict;
  note?: string;
  /** ISO time of the decision. */
  at: string;
}

export class PicksError extends Error {
  override readonly name = 'PicksError';
}

/** One line of the picks file, checked: what a hand edit or a planted file may hold is refused, naming the line. */
export function parsePickLine(line: string, lineNumber: number): Pick {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new PicksError(`${PICKS_RECORD}:${lineNumber}: not JSON`);
  }
  const v = value as Partial<Pick> | null;
  if (!v || typeof v !== 'object' || typeof v.key !== 'string' || v.key === '') {
    throw new PicksError(`${PICKS_RECORD}:${lineNumber}: "key" must be a non-empty string`);
  }
  if (v.verdict !== 'keep' && v.verdict !== 'reject' && v.verdict !== 'clear') {
    throw new PicksError(`${PICKS_RECORD}:${lineNumber}: "verdict" must be keep, reject or clear`);
  }
  if (v.note !== undefined && typeof v.note !== 'string') throw new PicksError(`${PICKS_RECORD}:${lineNumber}: "note" must be a string`);
  if (typeof v.at !== 'string') throw new PicksError(`${PICKS_RECORD}:${lineNumber}: "at" must be an ISO time`);
  const pick: Pick = { key: v.key, verdict: v.verdict, at: v.at };
  if (v.note) pick.note = v.note.slice(0, MAX_NOTE_CHARS);
  return pick;
}

/** Every decision in the file, in order. */
export function parsePicks(text: string): Pick[] {
  const picks: Pick[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() !== '') picks.push(parsePickLine(line, i + 1));
  });
  return picks;
}

/** The standing decision of each take (a `clear` removes it): key -> pick. */
export function currentPicks(picks: readonly Pick[]): Map<string, Pick> {
  const current = new Map<string, Pick>();
  for (const pick of picks) {
    if (pick.verdict === 'clear') current.delete(pick.key);
    else current.set(pick.key, pick);
  }
  return current;
}

export async function readPicks(storage: Storage): Promise<Pick[]> {
  const text = await storage.getRecord(PICKS_RECORD, MAX_PICKS_BYTES);
  return text === undefined ? [] : parsePicks(text);
}

/** Adds decisions to the file. Callers serialise their appends (one review server per job location). */
export async function appendPicks(storage: Storage, added: readonly Pick[]): Promise<void> {
  const before = await storage.getRecord(PICKS_RECORD, MAX_PICKS_BYTES);
  const lines = added.map((pick) => JSON.stringify(pick) + '\n').join('');
  await storage.putRecord(PICKS_RECORD, (before ?? '') + lines);
}
