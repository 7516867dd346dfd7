// Where the manifest's cost fields that are not amounts are (storage/spend-rows.ts): each named by
// file and line for a local output, by the item's key for a bucket (its rows are objects), so the
// user can look at what was skipped. Read only when some row has one: rare, and a second read then.
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ManifestRow } from './manifest';
import { decodeManifestRow } from './manifest-codec';
import { MANIFEST_FILE } from './names';
import { openUnder } from './safe-path';
import { untrustedCosts, untrustedCostText } from './spend-rows';
import type { Storage } from './storage';

/** `<where>: <field> <value> is not an amount …`, one per cost field that is not an amount. */
export async function untrustedCostNotes(storage: Storage, rows: readonly ManifestRow[]): Promise<string[]> {
  const found = untrustedCosts(rows);
  if (found.length === 0) return [];
  if (!storage.localPath)
    return found.map((cost) => `${storage.location}: the row of ${JSON.stringify(cost.key)}: ${untrustedCostText(cost)}`);
  // A local output (its location is its folder); localPath itself refuses reelflow's own names.
  const path = join(storage.location, MANIFEST_FILE);
  let fh: FileHandle | undefined;
  let text: string;
  try {
    fh = await openUnder(storage.location, MANIFEST_FILE, 'read');
    text = await fh.readFile({ encoding: 'utf8' });
  } catch {
    // Gone or unreadable since: the rows' keys still say which.
    return found.map((cost) => `${path}: the row of ${JSON.stringify(cost.key)}: ${untrustedCostText(cost)}`);
  } finally {
    await fh?.close();
  }
  // Complete lines only, as the manifest is read: a torn last line is no row.
  const lines = text.slice(0, text.lastIndexOf('\n') + 1).split('\n');
  return lines.flatMap((line, i) => {
    const row = decodeManifestRow(line.trim());
    return row ? untrustedCosts([row]).map((cost) => `${path}:${i + 1}: ${untrustedCostText(cost)}`) : [];
  });
}
