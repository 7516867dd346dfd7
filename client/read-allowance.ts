// The folders outside a job file's own that this user lets the job read (jobfile/read-scope.ts,
// docs/files.md): `--allow-read DIR` on the command line, and allow_read in the user's read
// settings (jobfile/read-settings.ts). A job file has no say in it.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { readReadSettings, ReadSettingsError } from '../jobfile/read-settings';
import { UsageError } from './errors';

/** `--allow-read DIR`, as run and validate describe it. */
export const ALLOW_READ_HELP =
  "let the job read files below DIR, outside its job file's folder (repeatable; a job file cannot allow it; docs/files.md)";

/** The user's allowed folders, the settings' first, then `flags` (relative to the working directory); each once. */
export function allowedReads(flags: readonly string[] = []): string[] {
  let settings: string[];
  try {
    settings = readReadSettings().allowRead;
  } catch (error) {
    if (error instanceof ReadSettingsError) throw new UsageError(error.message);
    throw error;
  }
  const given = flags.map((dir) => {
    const absolute = resolve(dir);
    let isFolder = false;
    try {
      isFolder = statSync(absolute).isDirectory();
    } catch {
      isFolder = false;
    }
    if (!isFolder) throw new UsageError(`--allow-read ${dir}: no such folder (give the folder whose files the job may read)`);
    return absolute;
  });
  return [...new Set([...settings, ...given])];
}
