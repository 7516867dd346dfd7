// What the expansion steps share: where to report, and how to reach the file system.
import { readFileSync, realpathSync, statSync } from 'node:fs';
import type { JobFileError } from './plan';
import { namingKey, type YamlPositions } from './positions';

/** File access the loader needs; injected so that expansion stays testable without disk. */
export interface FileAccess {
  isFile(path: string): boolean;
  /** The path with every link followed, or undefined when it does not exist. */
  realPath(path: string): string | undefined;
  /** The file's text, or an Error saying why it cannot be read. */
  readText(path: string): string | Error;
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
      return readFileSync(path, 'utf8');
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      const why =
        err.code === 'ENOENT'
          ? 'no such file'
          : err.code === 'EISDIR'
            ? 'it is a directory'
            : err.code === 'EACCES'
              ? 'permission denied'
              : err.message;
      return new Error(why);
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
}

export function warn(ctx: Ctx, path: readonly PropertyKey[], message: string): void {
  const at = ctx.pos.at(path);
  ctx.warnings.push(`${ctx.file}:${at.line}:${at.column}: warning: ${namingKey(path, message).message}`);
}
