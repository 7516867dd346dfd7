// How the review page arranges takes (docs/review.md): grouped by source item, each take labelled
// with what tells it apart from its neighbours, each tile in its video's own aspect ratio. Rows
// written before takes existed lack `take`, `group`, `ratio` and `resolution`: the fallbacks are
// take 1, the row's own key, and the video's measured size.
import type { ManifestRow } from '../../storage/manifest';

/** Which take of its source item a row is (absent: 1). */
export function takeOf(row: ManifestRow): number {
  return typeof row.take === 'number' && Number.isInteger(row.take) && row.take > 0 ? row.take : 1;
}

/** The source item a row belongs to (absent: its own key). */
export function groupOf(row: ManifestRow): string {
  return typeof row.group === 'string' && row.group !== '' ? row.group : row.key;
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

/** A group of takes of one source item, in page order. */
export interface TakeGroup {
  group: string;
  rows: ManifestRow[];
}

/**
 * The latest row of each key, grouped by source item. Groups come in the order of their first item
 * (index); within a group, takes sort by their matrix values, then model, then take.
 */
export function groupTakes(rows: readonly ManifestRow[]): TakeGroup[] {
  const latest = new Map<string, ManifestRow>();
  for (const row of rows) latest.set(row.key, row);
  const groups = new Map<string, ManifestRow[]>();
  for (const row of latest.values()) {
    const g = groupOf(row);
    const list = groups.get(g);
    if (list) list.push(row);
    else groups.set(g, [row]);
  }
  const ordered = [...groups.entries()].map(([group, list]) => ({ group, rows: list.sort(compareTakes) }));
  return ordered.sort((a, b) => firstIndex(a.rows) - firstIndex(b.rows));
}

function firstIndex(rows: readonly ManifestRow[]): number {
  return rows.reduce((min, r) => Math.min(min, r.index), Number.POSITIVE_INFINITY);
}

function compareTakes(a: ManifestRow, b: ManifestRow): number {
  const va = varsText(a);
  const vb = varsText(b);
  if (va !== vb) return va < vb ? -1 : 1;
  if (a.model !== b.model) return a.model < b.model ? -1 : 1;
  return takeOf(a) - takeOf(b) || a.index - b.index;
}

function varsText(row: ManifestRow): string {
  return Object.entries(row.vars ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('\u0000');
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
