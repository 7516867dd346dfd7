// The manifest as the commands read it: its rows, and on stderr a warning for each line that is not
// a row reelflow writes (storage/manifest-codec.ts says which and why), once per line per command,
// however many times the command reads the manifest.
import type { ManifestRow } from '../storage/manifest';
import type { SkippedRow } from '../storage/manifest-codec';
import type { Storage } from '../storage/storage';
import { plainText } from './terminal-text';

const warned = new Set<string>();

export function warnSkippedRows(skipped: readonly SkippedRow[]): void {
  for (const { where, problem } of skipped) {
    if (warned.has(where)) continue;
    warned.add(where);
    process.stderr.write(`reelflow: warning: ${plainText(where)}: ${plainText(problem)}; the row is skipped\n`);
  }
}

export async function readManifestRows(storage: Storage): Promise<ManifestRow[]> {
  const { rows, skipped } = await storage.readManifest();
  warnSkippedRows(skipped);
  return rows;
}
