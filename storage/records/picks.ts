// The user's picks among the takes of a job (docs/takes.md): keep or reject, with an optional note,
// one JSON line per decision, the last line of a render winning. A pick belongs to the render that
// was seen (its file and sha256), not to the take's key: a changed request renders the take again
// beside the old file, and the new render starts unpicked while the old pick stays with the old
// file. `reelflow review` writes them; `run --redo rejected` and `results --kept` read them. Kept as
// one of the location's records (Storage.putRecord: written whole, never through a link), so local
// and S3 output behave alike.
import type { ManifestRow } from '../manifest/row';
import type { RecordStore } from './store';

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
  /** The render picked: its stored file (absent for a take that stored none, and in picks written before renders were named). */
  file?: string;
  /** The picked file's sha256, when its row has one. */
  sha256?: string;
  /** The picked render's request digest (manifest `request_digest`): names a render that stored no file. */
  request_digest?: string;
}

/** The manifest fields that name a render (`Pick` here is a decision, not TypeScript's utility type). */
export interface RenderRow {
  key: ManifestRow['key'];
  file: ManifestRow['file'];
  sha256: ManifestRow['sha256'];
  request_digest?: ManifestRow['request_digest'];
  finished_at: ManifestRow['finished_at'];
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
  for (const field of ['file', 'sha256', 'request_digest'] as const) {
    if (v[field] !== undefined && typeof v[field] !== 'string')
      throw new PicksError(`${PICKS_RECORD}:${lineNumber}: "${field}" must be a string`);
  }
  const pick: Pick = { key: v.key, verdict: v.verdict, at: v.at };
  if (v.note) pick.note = v.note.slice(0, MAX_NOTE_CHARS);
  if (v.file) pick.file = v.file;
  if (v.sha256) pick.sha256 = v.sha256;
  if (v.request_digest) pick.request_digest = v.request_digest;
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

/** The identity of a render: its take's key and its stored file (else its request digest). */
export function renderKey(render: { key: string; file?: string | null; request_digest?: string | undefined }): string {
  return render.file ? `${render.key}\u0000f:${render.file}` : `${render.key}\u0000d:${render.request_digest ?? ''}`;
}

/** A pick naming the render `row` (what `reelflow review` writes). */
export function pickOn(row: RenderRow, verdict: Verdict, at: string, note?: string): Pick {
  const pick: Pick = { key: row.key, verdict, at };
  if (note !== undefined) pick.note = note;
  if (row.file) pick.file = row.file;
  if (row.sha256) pick.sha256 = row.sha256;
  if (row.request_digest) pick.request_digest = row.request_digest;
  return pick;
}

/**
 * A pick written before picks named their render (only a key): it applies to the render its key
 * had when it was made, the last row of that key finished at or before the pick. A pick older than
 * every row of its key names nothing.
 */
function renderAt(pick: Pick, rowsOfKey: readonly RenderRow[] | undefined): RenderRow | undefined {
  let found: RenderRow | undefined;
  const at = Date.parse(pick.at);
  for (const row of rowsOfKey ?? []) {
    const finished = Date.parse(row.finished_at);
    if (Number.isNaN(at) || Number.isNaN(finished) || finished <= at) found = row;
  }
  return found;
}

/** The standing picks, by render. */
export class StandingPicks {
  private constructor(private readonly byRender: Map<string, Pick>) {}

  /**
   * The standing decision of each render (a `clear` removes it), from every decision in order and the
   * manifest's rows (to place picks that name only a key).
   */
  static of(picks: readonly Pick[], rows: readonly RenderRow[]): StandingPicks {
    const rowsByKey = new Map<string, RenderRow[]>();
    for (const row of rows) {
      const list = rowsByKey.get(row.key);
      if (list) list.push(row);
      else rowsByKey.set(row.key, [row]);
    }
    const byRender = new Map<string, Pick>();
    for (const pick of picks) {
      let placed = pick;
      if (pick.file === undefined && pick.request_digest === undefined) {
        const row = renderAt(pick, rowsByKey.get(pick.key));
        if (!row) continue;
        placed = pickOn(row, pick.verdict, pick.at, pick.note);
      }
      const id = renderKey(placed);
      if (placed.verdict === 'clear') byRender.delete(id);
      else byRender.set(id, placed);
    }
    return new StandingPicks(byRender);
  }

  /** The standing pick of the render `row` (none when its file's sha256 is not the one picked). */
  of(row: RenderRow): Pick | undefined {
    const pick = this.byRender.get(renderKey(row));
    if (!pick || (pick.sha256 && row.sha256 && pick.sha256 !== row.sha256)) return undefined;
    return pick;
  }

  /** Records a decision made now (the review server's own). */
  add(pick: Pick): void {
    if (pick.verdict === 'clear') this.byRender.delete(renderKey(pick));
    else this.byRender.set(renderKey(pick), pick);
  }

  /** Every standing pick. */
  all(): Pick[] {
    return [...this.byRender.values()];
  }
}

/** The time of the latest decision: the last review. */
export function lastPickAt(picks: readonly Pick[]): number | undefined {
  let last: number | undefined;
  for (const pick of picks) {
    const at = Date.parse(pick.at);
    if (!Number.isNaN(at) && (last === undefined || at > last)) last = at;
  }
  return last;
}

export async function readPicks(storage: RecordStore): Promise<Pick[]> {
  const text = await storage.getRecord(PICKS_RECORD, MAX_PICKS_BYTES);
  return text === undefined ? [] : parsePicks(text);
}

/** Adds decisions to the file. Callers serialise their appends (one review server per job location). */
export async function appendPicks(storage: RecordStore, added: readonly Pick[]): Promise<void> {
  const before = await storage.getRecord(PICKS_RECORD, MAX_PICKS_BYTES);
  const lines = added.map((pick) => JSON.stringify(pick) + '\n').join('');
  await storage.putRecord(PICKS_RECORD, (before ?? '') + lines);
}
