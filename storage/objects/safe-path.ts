// Writing safely under a root (docs/files.md): every file reelflow writes on a local disk (videos
// and their parts, the manifest, the report and its posters, the inputs cache and store) goes
// through here. A job folder may have been handed to the user, so anything under the root may be a
// planted link: `out/manifest.jsonl -> ~/.bashrc` would make reelflow append to the shell's start-up
// file, `out/clips -> ../../elsewhere` would put videos outside the output location.
//
// So below the root nothing is followed. Folders are walked one component at a time with lstat and
// created one by one (mkdir never follows a link in its last component); files are opened with
// O_NOFOLLOW (exclusively when new), and the open descriptor must be a regular file with no other
// hard link. Linux has no O_NOFOLLOW for the components before the last, and Node has no openat, so
// after opening, the folder's real path is checked against the root's: a folder swapped for a link
// between the walk and the open is noticed. The root itself is the user's choice (output.dir, the
// cache directory) and is resolved as it is, links included.
import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, rename, type FileHandle } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { errnoCode } from './errors';
import { StorageError } from './errors';

/** A path under a root is a link, or not what reelflow writes (a folder where a file goes, a hard link). */
export class UnsafePathError extends StorageError {
  override readonly final = true;
  constructor(
    readonly path: string,
    what: string,
  ) {
    super(`${path} is ${what}: reelflow never writes through one (it could overwrite a file elsewhere); remove it and run again`);
  }
}

/**
 * How a file is opened. `create`: a new file, exclusively (a link or any file already there is
 * refused); `append`: created if missing, read and appended to; `update`: an existing file,
 * written in place; `read`: an existing file, read only.
 */
export type OpenMode = 'create' | 'append' | 'update' | 'read';

const FLAGS: Record<OpenMode, number> = {
  create: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
  append: constants.O_RDWR | constants.O_APPEND | constants.O_CREAT,
  update: constants.O_WRONLY,
  read: constants.O_RDONLY,
};

/** `root` joined with the `/`-separated `name`, without resolving anything. */
export function pathUnder(root: string, name: string): string {
  return name === '' ? root : join(root, ...name.split('/'));
}

/**
 * Makes sure the folder `dir` (`/`-separated, relative to `root`; '' is the root) exists as real
 * folders, creating the missing ones one at a time (and the root itself with its parents when
 * `create`). Returns its path, and the first folder this call created (for fsyncs), if any.
 * File system errors are thrown as they are, for the caller to word.
 */
export async function safeDir(root: string, dir: string, create: boolean): Promise<{ path: string; created?: string }> {
  let created: string | undefined;
  if (create) created = await mkdir(root, { recursive: true });
  let path = root;
  for (const segment of dir === '' ? [] : dir.split('/')) {
    path = join(path, segment);
    let found = await lstatOrUndefined(path);
    if (!found && create) {
      await mkdir(path).then(
        () => void (created ??= path),
        (err: unknown) => {
          if (errnoCode(err) !== 'EEXIST') throw err;
        },
      );
      found = await lstatOrUndefined(path);
    }
    if (!found) return { path: pathUnder(root, dir), created };
    if (found.isSymbolicLink()) throw new UnsafePathError(path, 'a symbolic link');
    if (!found.isDirectory()) throw new StorageError(`${path} is a file where reelflow needs a folder`);
  }
  return { path, created };
}

/**
 * Opens the file `name` (relative to `root`) as `mode` says, never through a link; its folders are
 * checked (and, unless reading, created) as safeDir does.
 */
export async function openUnder(root: string, name: string, mode: OpenMode): Promise<FileHandle> {
  const path = pathUnder(root, name);
  const slash = name.lastIndexOf('/');
  await safeDir(root, slash < 0 ? '' : name.slice(0, slash), mode !== 'read');
  const handle = await openFile(path, mode);
  try {
    await checkInside(root, dirname(path));
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * Opens `path` as `mode` says without following a link in its last component, for a caller that
 * has checked its folder (openUnder does both): the descriptor must be a regular file, and one
 * opened for writing must have no other hard link.
 */
export async function openFile(path: string, mode: OpenMode): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a planted FIFO must not wait for a reader (no effect on regular files).
    handle = await open(path, FLAGS[mode] | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644);
  } catch (err) {
    const code = errnoCode(err);
    // O_NOFOLLOW on a link: ELOOP (Linux), EMLINK (FreeBSD), EFTYPE (NetBSD); O_EXCL on one: EEXIST.
    if (code === 'ELOOP' || code === 'EMLINK' || code === 'EFTYPE' || (code === 'EEXIST' && (await isLink(path)))) {
      throw new UnsafePathError(path, 'a symbolic link');
    }
    const found = code === 'ENOENT' ? undefined : await lstatOrUndefined(path).catch(() => undefined);
    if (found && !found.isFile() && !found.isSymbolicLink()) throw new UnsafePathError(path, 'not a regular file');
    throw err;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new UnsafePathError(path, 'not a regular file');
    if (mode !== 'read' && st.nlink > 1) throw new UnsafePathError(path, `a file with ${st.nlink - 1} other hard link(s)`);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Renames `from` to `to` (both relative to `root`); a link at `to` is refused rather than replaced. */
export async function renameUnder(root: string, from: string, to: string): Promise<void> {
  const target = pathUnder(root, to);
  if (await isLink(target)) throw new UnsafePathError(target, 'a symbolic link');
  await checkInside(root, dirname(target));
  await checkInside(root, dirname(pathUnder(root, from)));
  await rename(pathUnder(root, from), target);
}

/** lstat, or undefined when nothing is there. */
export async function lstatOrUndefined(path: string) {
  try {
    return await lstat(path);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}

async function isLink(path: string): Promise<boolean> {
  return (await lstatOrUndefined(path))?.isSymbolicLink() ?? false;
}

/** The folder `dir` is, after resolving every link, the one the walk named under the root's real path. */
async function checkInside(root: string, dir: string): Promise<void> {
  const [realRoot, realDir] = await Promise.all([realpath(root), realpath(dir)]);
  const expected = join(realRoot, relative(root, dir));
  if (realDir !== expected && !(realDir + sep).startsWith(realRoot + sep)) {
    throw new UnsafePathError(dir, `a folder that leads outside ${root} (to ${realDir})`);
  }
  if (realDir !== expected) throw new UnsafePathError(dir, `a folder reached through a link (it is ${realDir})`);
}
