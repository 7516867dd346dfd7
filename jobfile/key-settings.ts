// The user's key settings file: which key variables may go to which gateway origins, beyond the
// default (GATEWAY_API_KEY to loopback; jobfile/key-rule.ts, docs/keys.md). It belongs to the user
// of the machine, never to a job folder: `$REELFLOW_CONFIG`, else `$XDG_CONFIG_HOME/reelflow/keys.yaml`,
// else `~/.config/reelflow/keys.yaml`. A missing file allows nothing more than the default.
//
//   GATEWAY_API_KEY:
//     - https://gateway.example.com
//   LAB_GATEWAY_KEY:
//     - http://10.1.2.3:4000
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import { neverSentReason, originOf, type KeyAllowance } from './key-rule';

export class KeySettingsError extends Error {
  override name = 'KeySettingsError';
}

export interface KeySettings {
  /** The file read (or that would be read: messages tell the user where to write). */
  path: string;
  allowances: KeyAllowance[];
}

export function keySettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.REELFLOW_CONFIG) return resolve(env.REELFLOW_CONFIG);
  const base = env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(homedir(), '.config');
  return join(base, 'reelflow', 'keys.yaml');
}

/** Reads the settings file; a file that is there and wrong is an error naming file:line:column. */
export function readKeySettings(env: NodeJS.ProcessEnv = process.env): KeySettings {
  const path = keySettingsPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { path, allowances: [] };
    throw new KeySettingsError(`${path}: cannot read the key settings file: ${(error as Error).message}`);
  }
  return { path, allowances: parseKeySettings(text, path) };
}

export function parseKeySettings(text: string, path: string): KeyAllowance[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const at = (offset: number | undefined) => {
    const { line, col } = lines.linePos(offset ?? 0);
    return `${path}:${line}:${col}`;
  };
  const firstError = doc.errors[0];
  if (firstError) throw new KeySettingsError(`${at(firstError.pos[0])}: ${firstError.message.split('\n')[0]}`);
  const expected = 'expected a mapping of key variables to lists of origins, e.g.\nGATEWAY_API_KEY:\n  - https://gateway.example.com';
  if (doc.contents === null) return [];
  if (!isMap(doc.contents)) throw new KeySettingsError(`${at(doc.contents.range?.[0])}: ${expected}`);
  const allowances: KeyAllowance[] = [];
  for (const pair of doc.contents.items) {
    const where = at((pair.key as { range?: [number, number, number] } | null)?.range?.[0]);
    const variable = isScalar(pair.key) ? String(pair.key.value) : '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable))
      throw new KeySettingsError(`${where}: ${JSON.stringify(variable)} is not a variable name; ${expected}`);
    const never = neverSentReason(variable);
    if (never) throw new KeySettingsError(`${where}: ${variable} is never sent as a gateway key, because ${never}: remove it`);
    const origins: unknown = isScalar(pair.value) ? [pair.value.value] : isSeq(pair.value) ? pair.value.toJSON() : undefined;
    if (!Array.isArray(origins) || origins.some((o) => typeof o !== 'string'))
      throw new KeySettingsError(`${where}: ${variable}: ${expected}`);
    for (const url of origins as string[]) {
      const origin = originOf(url);
      if (!origin) throw new KeySettingsError(`${where}: ${variable}: ${JSON.stringify(url)} is not an http(s) address`);
      allowances.push({ variable, origin });
    }
  }
  return allowances;
}
