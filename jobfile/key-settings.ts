// The user's key settings file: which key variables may go to which gateway origins, beyond the
// default (GATEWAY_API_KEY to loopback; jobfile/key-rule.ts, docs/keys.md). It belongs to the user
// of the machine, never to a job folder: `$REELFLOW_CONFIG`, else `$XDG_CONFIG_HOME/reelflow/keys.yaml`,
// else `~/.config/reelflow/keys.yaml`. A missing file allows nothing more than the default.
//
//   GATEWAY_API_KEY:
//     - https://gateway.example.com
//   LAB_GATEWAY_KEY:
//     - http://10.1.2.3:4000
import { isScalar, isSeq } from 'yaml';
import { neverSentReason, originOf, type KeyAllowance } from './key-rule';
import { readSettingsText, settingsEntries, userSettingsPath } from './settings-file';

export class KeySettingsError extends Error {
  override name = 'KeySettingsError';
}

export interface KeySettings {
  /** The file read (or that would be read: messages tell the user where to write). */
  path: string;
  allowances: KeyAllowance[];
}

export function keySettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return userSettingsPath(env, 'REELFLOW_CONFIG', 'keys.yaml');
}

/** Reads the settings file; a file that is there and wrong is an error naming file:line:column. */
export function readKeySettings(env: NodeJS.ProcessEnv = process.env): KeySettings {
  const path = keySettingsPath(env);
  const text = readSettingsText(path, 'the key settings file', (m) => new KeySettingsError(m));
  return { path, allowances: text === undefined ? [] : parseKeySettings(text, path) };
}

export function parseKeySettings(text: string, path: string): KeyAllowance[] {
  const expected = 'expected a mapping of key variables to lists of origins, e.g.\nGATEWAY_API_KEY:\n  - https://gateway.example.com';
  const allowances: KeyAllowance[] = [];
  for (const { name: variable, value, where } of settingsEntries(text, path, expected, (m) => new KeySettingsError(m))) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable))
      throw new KeySettingsError(`${where}: ${JSON.stringify(variable)} is not a variable name; ${expected}`);
    const never = neverSentReason(variable);
    if (never) throw new KeySettingsError(`${where}: ${variable} is never sent as a gateway key, because ${never}: remove it`);
    const origins: unknown = isScalar(value) ? [value.value] : isSeq(value) ? value.toJSON() : undefined;
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
