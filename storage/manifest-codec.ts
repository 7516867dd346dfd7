import type { ManifestRow } from './manifest';

/** One manifest row as one line: JSON never contains a raw newline, so a line is a row. */
export function encodeManifestRow(row: ManifestRow): string {
  return `${JSON.stringify(row)}\n`;
}

export function decodeManifestRow(text: string): ManifestRow | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const row = value as Partial<ManifestRow>;
    if (typeof row.key !== 'string' || typeof row.state !== 'string') return undefined;
    return value as ManifestRow;
  } catch {
    return undefined;
  }
}

export interface ParsedManifest {
  rows: ManifestRow[];
  /** Bytes of `text` up to and including the last newline: everything after is a torn tail. */
  completeLength: number;
}

/**
 * Parses JSON Lines. Only newline-terminated lines count: a crash mid-append can leave a torn last
 * line, which is ignored. A complete line that is not a row (edited by hand) is skipped as well.
 */
export function parseManifest(buf: Buffer): ParsedManifest {
  const completeLength = buf.lastIndexOf(0x0a) + 1;
  const rows: ManifestRow[] = [];
  let start = 0;
  while (start < completeLength) {
    const end = buf.indexOf(0x0a, start);
    const line = buf.toString('utf8', start, end).trim();
    start = end + 1;
    if (line === '') continue;
    const row = decodeManifestRow(line);
    if (row) rows.push(row);
  }
  return { rows, completeLength };
}

/**
 * The sha256 a manifest vouches for: the latest succeeded row naming this file with this size.
 * `file` may be the object name or the location the write returned.
 */
export class ManifestDigests {
  private readonly byFile = new Map<string, { bytes: number | null; sha256: string }>();

  add(rows: Iterable<ManifestRow>): void {
    for (const row of rows) {
      if (row.state === 'succeeded' && row.file && row.sha256) {
        this.byFile.set(row.file, { bytes: row.bytes, sha256: row.sha256 });
      }
    }
  }

  clear(): void {
    this.byFile.clear();
  }

  lookup(names: string[], bytes: number): string | undefined {
    for (const name of names) {
      const hit = this.byFile.get(name);
      if (hit && (hit.bytes === null || hit.bytes === bytes)) return hit.sha256;
    }
    return undefined;
  }
}
