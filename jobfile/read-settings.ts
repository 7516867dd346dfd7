// The user's read settings: folders outside a job file's own that the user lets every job read
// (jobfile/read-scope.ts, docs/files.md). Like the key settings, they belong to the user of the
// machine, never to a job folder: `reads.yaml` beside the key settings file (jobfile/key-settings.ts),
// so `$REELFLOW_CONFIG`'s folder, else `$XDG_CONFIG_HOME/reelflow/`, else `~/.config/reelflow/`.
// A job file cannot widen its own scope: that would let a handed file read the user's keys.
//
//   allow_read:
//     - ~/shared-assets
//     - /srv/brand
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { isSeq } from 'yaml';
import { keySettingsPath } from './key-settings';
import { readSettingsText, settingsEntries } from './settings-file';

export class ReadSettingsError extends Error {
  override name = 'ReadSettingsError';
}

export interface ReadSettings {
  /** The file read (or that would be read: messages tell the user where to write). */
  path: string;
  /** Absolute folders every job of this user may read below. */
  allowRead: string[];
}

export function readSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(keySettingsPath(env)), 'reads.yaml');
}

/** Reads the settings file; a file that is there and wrong is an error naming file:line:column. */
export function readReadSettings(env: NodeJS.ProcessEnv = process.env): ReadSettings {
  const path = readSettingsPath(env);
  const text = readSettingsText(path, 'the read settings file', (m) => new ReadSettingsError(m));
  return { path, allowRead: text === undefined ? [] : parseReadSettings(text, path) };
}

export function parseReadSettings(text: string, path: string): string[] {
  const expected = 'expected allow_read with a list of absolute folders, e.g.\nallow_read:\n  - ~/shared-assets';
  const folders: string[] = [];
  for (const { name, value, where } of settingsEntries(text, path, expected, (m) => new ReadSettingsError(m))) {
    if (name !== 'allow_read') throw new ReadSettingsError(`${where}: unknown setting ${JSON.stringify(name)}; ${expected}`);
    const listed: unknown = isSeq(value) ? value.toJSON() : undefined;
    if (!Array.isArray(listed) || listed.some((f) => typeof f !== 'string')) throw new ReadSettingsError(`${where}: ${expected}`);
    for (const folder of listed as string[]) {
      const absolute = folder === '~' || folder.startsWith('~/') ? join(homedir(), folder.slice(1)) : folder;
      if (!isAbsolute(absolute))
        throw new ReadSettingsError(`${where}: ${JSON.stringify(folder)} is not an absolute folder (start it with / or ~/)`);
      folders.push(absolute);
    }
  }
  return folders;
}
