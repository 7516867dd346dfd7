// How the review page arranges takes (docs/review.md): one row per prompt (an item and matrix
// combination, the key of its first take), its takes side by side in take order, each row labelled
// by its item's id and the matrix values that tell it from its siblings, each tile in its video's
// own aspect ratio. Rows written before takes existed lack `take`, `ratio` and `resolution`: the
// fallbacks are take 1 (from the key) and the video's measured size.
import { baseKeyOf, takeOfKey } from '../../jobfile/takes';
import type { ManifestRow } from '../../storage/manifest';
import { renderKey, type StandingPicks } from '../../storage/picks';

/** Which take of its prompt a row is (absent: what its key says). */
export function takeOf(row: Pick<ManifestRow, 'key' | 'take'>): number {
  return typeof row.take === 'number' && Number.isInteger(row.take) && row.take > 0 ? row.take : takeOfKey(row.key);
}

/** The prompt a take renders: its item and matrix combination (the key of its first take). */
export function promptOf(row: Pick<ManifestRow, 'key'>): string {
  return baseKeyOf(row.key);
}

/** The source item (what `id`, or the expansion's `group`, names): its prompts' rows sit together. */
export function sourceOf(row: ManifestRow): string {
  return row.id ?? (typeof row.group === 'string' && row.group !== '' ? row.group : promptOf(row));
}

/** `16:9` -> 16/9; undefined for anything that is not two positive numbers. */
export function parseRatio(ratio: string | undefined): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*[:x/]\s*(\d+(?:\.\d+)?)\s*$/.exec(ratio ?? '');
  if (!match) return undefined;
  const value = Number(match[1]) / Number(match[2]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** `1280x720`-like sizes as the simplest ratio (`16:9`), for rows that do not say which they asked for. */
export function ratioText(width: number, height: number): string {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const d = gcd(width, height) || 1;
  const w = width / d;
  const h = height / d;
  // 854x480 and similar odd sizes: name the common ratio they are closest to.
  if (w > 32 || h > 32) {
    const near = COMMON_RATIOS.find(([cw, ch]) => Math.abs(cw / ch - width / height) < 0.02);
    if (near) return `${near[0]}:${near[1]}`;
    return (width / height).toFixed(2);
  }
  return `${w}:${h}`;
}

const COMMON_RATIOS: ReadonlyArray<readonly [number, number]> = [
  [16, 9],
  [9, 16],
  [1, 1],
  [4, 3],
  [3, 4],
  [21, 9],
  [2, 3],
  [3, 2],
];

/** Aspect ratios outside this band are clamped, so one odd video cannot make a tile 20 screens wide. */
const MIN_ASPECT = 0.25;
const MAX_ASPECT = 4;

/** Width / height for a row's tile: what it asked for, else its measured size, else 16:9. */
export function aspectOf(row: ManifestRow, size: { width?: number; height?: number } | undefined): number {
  const measured = size?.width && size.height ? size.width / size.height : undefined;
  const aspect = measured ?? parseRatio(row.ratio) ?? 16 / 9;
  return Math.min(MAX_ASPECT, Math.max(MIN_ASPECT, aspect));
}

/** One take on the page: a current render, or an earlier render of it that still carries a pick. */
export interface ShownTake {
  row: ManifestRow;
  /** A render its take has since been rendered again beside (a changed request: docs/reruns.md). */
  earlier?: boolean;
}

/** The takes of one prompt (an item and matrix combination), side by side in take order. */
export interface PromptRow {
  prompt: string;
  source: string;
  /** The matrix values that tell this prompt from the other prompts of its source item. */
  values: Array<[string, string]>;
  takes: ShownTake[];
}

/**
 * The page's rows: one per prompt, in the job's order (its first take's index), each with its takes
 * in take order; an earlier render (`earlier`, the renders a changed request replaced that still
 * carry a pick) sits after the current render of its take.
 */
export function promptRows(current: readonly ManifestRow[], earlier: readonly ManifestRow[] = []): PromptRow[] {
  const byPrompt = new Map<string, ShownTake[]>();
  const add = (take: ShownTake): void => {
    const p = promptOf(take.row);
    const list = byPrompt.get(p);
    if (list) list.push(take);
    else byPrompt.set(p, [take]);
  };
  for (const row of current) add({ row });
  for (const row of earlier) add({ row, earlier: true });
  const rows = [...byPrompt.entries()].map(([prompt, takes]) => ({
    prompt,
    source: sourceOf(takes[0]!.row),
    values: [] as Array<[string, string]>,
    takes: takes.sort((a, b) => takeOf(a.row) - takeOf(b.row) || Number(a.earlier ?? false) - Number(b.earlier ?? false)),
  }));
  rows.sort((a, b) => firstIndex(a.takes) - firstIndex(b.takes) || (a.prompt < b.prompt ? -1 : a.prompt > b.prompt ? 1 : 0));
  labelValues(rows);
  return rows;
}

function firstIndex(takes: readonly ShownTake[]): number {
  return takes.reduce((min, t) => Math.min(min, t.row.index), Number.POSITIVE_INFINITY);
}

/** Each row's values that differ among the prompts of its source item (a value all share tells nothing apart). */
function labelValues(rows: PromptRow[]): void {
  const bySource = new Map<string, PromptRow[]>();
  for (const r of rows) bySource.set(r.source, [...(bySource.get(r.source) ?? []), r]);
  for (const siblings of bySource.values()) {
    const varsOf = (r: PromptRow): Record<string, string> => r.takes[0]?.row.vars ?? {};
    const names = [...new Set(siblings.flatMap((r) => Object.keys(varsOf(r))))].sort();
    const differing = names.filter((n) => new Set(siblings.map((r) => varsOf(r)[n])).size > 1);
    for (const r of siblings) {
      r.values = differing.flatMap((n) => {
        const v = varsOf(r)[n];
        return typeof v === 'string' ? [[n, v] as [string, string]] : [];
      });
    }
  }
}

/** The matrix/placeholder names used by any row, with their values in first-seen order (the filters). */
export function varValues(rows: readonly ManifestRow[]): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const row of rows) {
    for (const [name, value] of Object.entries(row.vars ?? {})) {
      if (typeof value !== 'string') continue;
      const list = values.get(name) ?? [];
      if (!list.includes(value)) list.push(value);
      values.set(name, list);
    }
  }
  return new Map([...values.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The models of the rows, in first-seen order. */
export function modelsOf(rows: readonly ManifestRow[]): string[] {
  return [...new Set(rows.map((r) => r.model))];
}

/**
 * The renders a changed request replaced (not the latest row of their key) that still carry a
 * standing pick: the file a person kept or rejected is still there, so the page shows it beside the
 * new render. One row per render (its latest).
 */
export function earlierPicked(all: readonly ManifestRow[], picks: StandingPicks): ManifestRow[] {
  const latest = new Map<string, ManifestRow>();
  for (const row of all) latest.set(row.key, row);
  const earlier = new Map<string, ManifestRow>();
  for (const row of all) {
    const current = latest.get(row.key);
    if (!current || renderKey(current) === renderKey(row) || !picks.of(row)) continue;
    earlier.set(renderKey(row), row);
  }
  return [...earlier.values()];
}
