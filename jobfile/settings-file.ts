// How the user's settings files (keys.yaml, reads.yaml, notify.yaml) are found and read: a missing
// file is an empty one, and a file that is there and wrong is an error naming file:line:column,
// raised as the caller's own error class so each command says which file it was.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';

/** One top-level entry of a settings file: its name, its YAML value node, and where its key is. */
export interface SettingsEntry {
  name: string;
  value: unknown;
  where: string;
}

/**
 * Where a user's settings file is: the variable that names it (`REELFLOW_CONFIG`,
 * `REELFLOW_NOTIFY_CONFIG`) when set, else `$XDG_CONFIG_HOME/reelflow/NAME`, else
 * `~/.config/reelflow/NAME` (docs/keys.md).
 */
export function userSettingsPath(env: NodeJS.ProcessEnv, variable: string, name: string): string {
  const named = env[variable];
  if (named) return resolve(named);
  const base = env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(homedir(), '.config');
  return join(base, 'reelflow', name);
}

/** The file's text, or undefined when there is no file. `what` names it in the error (`the key settings file`). */
export function readSettingsText(path: string, what: string, fail: (message: string) => Error): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fail(`${path}: cannot read ${what}: ${(error as Error).message}`);
  }
}

/** The entries of a settings file's top-level mapping; `expected` says what the file should hold. */
export function settingsEntries(text: string, path: string, expected: string, fail: (message: string) => Error): SettingsEntry[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const at = (offset: number | undefined) => {
    const { line, col } = lines.linePos(offset ?? 0);
    return `${path}:${line}:${col}`;
  };
  const firstError = doc.errors[0];
  if (firstError) throw fail(`${at(firstError.pos[0])}: ${firstError.message.split('\n')[0]}`);
  if (doc.contents === null) return [];
  if (!isMap(doc.contents)) throw fail(`${at(doc.contents.range?.[0])}: ${expected}`);
  return doc.contents.items.map((pair) => ({
    name: isScalar(pair.key) ? String(pair.key.value) : '',
    value: pair.value,
    where: at((pair.key as { range?: [number, number, number] } | null)?.range?.[0]),
  }));
}
