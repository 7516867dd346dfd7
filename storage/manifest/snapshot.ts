// The manifest as one object in a bucket: `manifest.jsonl` at the output prefix, in the format of
// local output's manifest.jsonl (one row per line), holding the latest row of each item. The row
// objects under `manifest/` stay the truth: rows are never deleted, so any number of workers keep
// appending without read-modify-write races, and a snapshot is only ever a faster way to read them.
//
// Which row objects a snapshot folds in: those listed when it was built, which in name order end at
// `through` and number `folded`. A reader fetches the snapshot first, then lists the row objects:
// when exactly `folded` of them sort up to `through`, those are the folded ones (rows are never
// removed, so a listing made after the snapshot holds them all) and only the ones after `through`
// are read. Anything else (a row from a machine whose clock was behind, objects removed by hand)
// reads every row object after the snapshot's rows, which is what reading without a snapshot gives.
import type { ManifestRow } from './row';
import { latestRowByKey } from './row';
import { encodeManifestRow } from './codec';

/** User metadata on the snapshot object (`x-amz-meta-…`), saying which row objects it folds in. */
export const SNAPSHOT_THROUGH = 'rows-through';
export const SNAPSHOT_FOLDED = 'rows-folded';

export interface SnapshotCoverage {
  /** Name (under the manifest folder) of the last row object folded in; '' when none was. */
  through: string;
  /** How many row objects were folded in: all those named up to `through`. */
  folded: number;
}

/** The latest row of each key, in item order (then key order, for items of a job file since edited). */
export function snapshotRows(rows: readonly ManifestRow[]): ManifestRow[] {
  return [...latestRowByKey(rows).values()].sort((a, b) => a.index - b.index || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The snapshot's body, one JSON line per row, as chunks (a large job's manifest is not one string). */
export function* snapshotLines(rows: readonly ManifestRow[]): Generator<Buffer> {
  for (const row of rows) yield Buffer.from(encodeManifestRow(row));
}

export function coverageMetadata(coverage: SnapshotCoverage): Record<string, string> {
  return { [SNAPSHOT_THROUGH]: coverage.through, [SNAPSHOT_FOLDED]: String(coverage.folded) };
}

/** The coverage a snapshot object's metadata states, or undefined when it states none it can prove. */
export function coverageFrom(metadata: Record<string, string> | undefined): SnapshotCoverage | undefined {
  const through = metadata?.[SNAPSHOT_THROUGH];
  const folded = Number(metadata?.[SNAPSHOT_FOLDED]);
  if (through === undefined || !Number.isSafeInteger(folded) || folded < 0) return undefined;
  return { through, folded };
}

/**
 * Which of the row objects `listed` (names in name order, listed after the snapshot was read) a
 * reader must still fetch: those after the snapshot when its coverage is provably what is listed up
 * to `through`, otherwise all of them.
 */
export function rowNamesToRead(listed: readonly string[], coverage: SnapshotCoverage | undefined): readonly string[] {
  return (coverage && rowNamesAfter(listed, coverage)) ?? listed;
}

/**
 * The row objects `listed` after those `coverage` accounts for, when exactly `coverage.folded` of
 * them sort up to `coverage.through` (rows are never removed, so nothing else came in between);
 * undefined otherwise (a row named early by a clock behind, rows removed by hand). A snapshot's
 * coverage and a reader's cursor are both checked this way.
 */
export function rowNamesAfter(listed: readonly string[], coverage: SnapshotCoverage): string[] | undefined {
  const after = coverage.through === '' ? 0 : upperBound(listed, coverage.through);
  return after === coverage.folded ? listed.slice(after) : undefined;
}

/** What a listing of row objects (in name order) covers: the coverage of a snapshot of it, or a cursor after it. */
export function coverageOf(listed: readonly string[]): SnapshotCoverage {
  return { through: listed.at(-1) ?? '', folded: listed.length };
}

/** Index of the first name greater than `name` in sorted `names`. */
function upperBound(names: readonly string[], name: string): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((names[mid] as string) <= name) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Names in the order S3 lists keys (UTF-8 byte order, which for these ASCII names is code unit order). */
export function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
