// A local reference opened the one time its bytes are read: for the plan's digest, or for a create's
// body. The plan checked the file's place and took its sha256; between then and the create anyone
// who can write in the job's folder can replace the file, by a link to a secret or by other bytes.
// So the create never opens a path twice and never follows a link below the checked folder: it
// opens the checked path once, makes sure of what it opened, compares its sha256 with the plan's,
// and streams the body from that same descriptor (gateway/streamed-body.ts).
//
// How "without following links" is made sure of. Node has no openat(), so a walk that opens each
// folder relative to the one before is not available. Instead:
//   1. every folder below the root is lstat'ed (no link, a folder), then the file is opened with
//      O_NOFOLLOW (a link as the last component fails with ELOOP) and O_NONBLOCK (a FIFO planted in
//      its place does not hang the open);
//   2. after the open, where the descriptor really is: on Linux /proc/self/fd/N names the file the
//      kernel opened, whatever links the lookup went through; it must be exactly the checked path.
//      This alone is race-free: a link swapped in and out during the open still shows;
//   3. elsewhere (no /proc), each folder is lstat'ed again and must be the same folder (device and
//      inode) and still no link, and the path's lstat must be the opened file (fstat's device and
//      inode). A link swapped in and back out between the two lstats is the one race left there,
//      and the sha256 check (the plan's digest) still holds the sent bytes to the checked ones.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readlink, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { CheckedReference } from '../jobfile/plan';
import { ReferenceChangedError } from './errors';

/** A reference file opened once; its bytes are read from `handle` only. */
export interface OpenedReference {
  /** The path it was opened at (messages). */
  path: string;
  handle: FileHandle;
  size: number;
  /** The sha256 its bytes must have (the plan's), when known. */
  sha256?: string;
  /** Closes the descriptor; safe to call more than once. */
  close(): Promise<void>;
}

/** Bytes per read when hashing. */
const HASH_READ_BYTES = 256 * 1024;

function changed(path: string, why: string): ReferenceChangedError {
  return new ReferenceChangedError(
    `reference file ${path} is not the file checked when the job was planned: ${why}; nothing of it was sent. ` +
      "If you replaced it yourself, run the job again (with a regular file inside the job's folder)",
  );
}

function opened(path: string, handle: FileHandle, size: number, sha256?: string): OpenedReference {
  let closing: Promise<void> | undefined;
  return { path, handle, size, ...(sha256 ? { sha256 } : {}), close: () => (closing ??= handle.close().catch(() => undefined)) };
}

/** The folders from `root` down to `path`'s own folder, each lstat'ed: none may be a link. */
async function foldersOnTheWay(root: string, path: string): Promise<{ at: string; dev: number; ino: number }[]> {
  const below = relative(root, path);
  if (below === '' || below === '..' || below.startsWith(`..${sep}`) || isAbsolute(below)) {
    throw changed(path, `it is not below ${root}, the folder the job may read`);
  }
  const folders: { at: string; dev: number; ino: number }[] = [];
  let at = root;
  for (const part of below.split(sep).slice(0, -1)) {
    at = join(at, part);
    const info = await lstat(at).catch(() => undefined);
    if (!info) throw changed(path, `${at} is gone`);
    if (info.isSymbolicLink()) throw changed(path, `${at} is now a symbolic link`);
    if (!info.isDirectory()) throw changed(path, `${at} is not a folder`);
    folders.push({ at, dev: info.dev, ino: info.ino });
  }
  return folders;
}

/** Step 2 or 3 above: the descriptor is the file at `path`, reached without a link. */
async function verifyPlace(path: string, handle: FileHandle, folders: readonly { at: string; dev: number; ino: number }[]): Promise<void> {
  const where = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  if (where !== undefined) {
    if (where !== path) throw changed(path, `it was reached through a symbolic link (to ${where})`);
    return;
  }
  for (const folder of folders) {
    const again = await lstat(folder.at).catch(() => undefined);
    if (!again || again.isSymbolicLink() || again.dev !== folder.dev || again.ino !== folder.ino)
      throw changed(path, `${folder.at} was replaced while it was opened`);
  }
  const [file, named] = await Promise.all([handle.stat(), lstat(path).catch(() => undefined)]);
  if (!named || named.dev !== file.dev || named.ino !== file.ino) throw changed(path, 'it was replaced while it was opened');
}

/**
 * Opens the checked file: below `checked.root`, no link at any component, a regular file. Its sha256
 * is not compared here (the caller reads the bytes: hashReference, or the body's stream).
 */
export async function openCheckedReference(checked: CheckedReference): Promise<OpenedReference> {
  const { path, root } = checked;
  const folders = await foldersOnTheWay(root, path);
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw changed(path, 'it is now a symbolic link');
    if (code === 'ENOENT') throw changed(path, 'it is gone');
    throw changed(path, `it cannot be opened (${(error as Error).message})`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw changed(path, 'it is not a regular file');
    await verifyPlace(path, handle, folders);
    return opened(path, handle, info.size, checked.sha256);
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/** An unchecked local reference (a page from before the check, `--dry-run`): opened once at its path. */
export async function openReferencePath(path: string): Promise<OpenedReference> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error('it is not a regular file');
    return opened(path, handle, info.size);
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/** sha256 (hex) of the opened file's first `size` bytes, read from its descriptor. */
export async function hashReference(file: OpenedReference): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(Math.min(HASH_READ_BYTES, Math.max(file.size, 1)));
  let position = 0;
  while (position < file.size) {
    const { bytesRead } = await file.handle.read(buffer, 0, Math.min(buffer.length, file.size - position), position);
    if (bytesRead === 0) throw changed(file.path, `it shrank to ${position} bytes while it was read`);
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return hash.digest('hex');
}

/** The error for bytes whose sha256 is not the plan's. */
export function digestMismatch(file: Pick<OpenedReference, 'path' | 'sha256'>, actual: string): ReferenceChangedError {
  return changed(file.path, `its content changed (sha256 ${actual.slice(0, 16)}…, the plan had ${file.sha256?.slice(0, 16) ?? '?'}…)`);
}

/**
 * Opens the checked file and, when the plan has its sha256, compares it before anything is sent:
 * a replaced file fails here, not halfway through a body. The caller streams from the same
 * descriptor, and the stream checks the sha256 again as it goes (a file written in place meanwhile).
 */
export async function openVerifiedReference(checked: CheckedReference): Promise<OpenedReference> {
  const file = await openCheckedReference(checked);
  if (!file.sha256) return file;
  try {
    const actual = await hashReference(file);
    if (actual !== file.sha256) throw digestMismatch(file, actual);
    return file;
  } catch (error) {
    await file.close();
    throw error;
  }
}
