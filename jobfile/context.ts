// What the expansion steps share: where to report, and how to reach the file system.
import { readFileSync, realpathSync, statSync } from 'node:fs';
import type { JobFileError } from './plan';
import { namingKey, type YamlPositions } from './positions';
import { decodeUtf8 } from './text';

/** File access the loader needs; injected so that expansion stays testable without disk. */
export interface FileAccess {
  isFile(path: string): boolean;
  /** The path with every link followed, or undefined when it does not exist. */
  realPath(path: string): string | undefined;
  /** The file's text, or an Error saying why it cannot be read (a NotUtf8Error when it is not UTF-8). */
  readText(path: string): string | Error;
  /** The file's size in bytes, or undefined when unknown (a reference's size is then checked when it is sent). */
  size?(path: string): number | undefined;
}

/** Why a file could not be read, in a user's words. */
export function unreadableBecause(error: unknown): string {
  const err = error as NodeJS.ErrnoException;
  const known: Record<string, string> = { ENOENT: 'no such file', EISDIR: 'it is a directory', EACCES: 'permission denied' };
  return (err.code !== undefined && known[err.code]) || err.message;
}

export const nodeFiles: FileAccess = {
  isFile(path) {
    try {
      return statSync(path).isFile();
    } catch {
      return false;
    }
  },
  realPath(path) {
    try {
      return realpathSync(path);
    } catch {
      return undefined;
    }
  },
  readText(path) {
    try {
      return decodeUtf8(readFileSync(path));
    } catch (e) {
      return new Error(unreadableBecause(e));
    }
  },
  size(path) {
    try {
      return statSync(path).size;
    } catch {
      return undefined;
    }
  },
};

export interface Ctx {
  /** The job file as the user named it (used in messages). */
  file: string;
  /** Directory of the job file, absolute. */
  dir: string;
  pos: YamlPositions;
  errors: JobFileError[];
  warnings: string[];
  fs: FileAccess;
  runDate: string;
  /** Folders outside the job file's own that the user lets it read (jobfile/read-scope.ts); absolute. */
  allowRead: readonly string[];
  /** Files read outside the job file's folder, listed once each (jobfile/read-scope.ts). */
  outsideReads: Set<string>;
}

export function warn(ctx: Ctx, path: readonly PropertyKey[], message: string): void {
  const at = ctx.pos.at(path);
  ctx.warnings.push(`${ctx.file}:${at.line}:${at.column}: warning: ${namingKey(path, message).message}`);
}
