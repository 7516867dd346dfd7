// Over 400 lines, for now: this one class is the local object store, manifest log and records at once
// (the Storage interface). Its manifest half (appendManifest to countManifestItems, the cursor) is the
// part to lift into manifest/ next, as a LocalManifestLog the class delegates to.
// Local directory storage. A video only ever appears under its final name complete and durable:
// bytes are hashed on their way (see digest) into `<name>.part` (see part-file), the part is fsynced,
// renamed, and the directory fsynced. A cut download keeps its `.part`, so the next attempt resumes
// with Range; `<name>.part.json` beside it says which download wrote it, and only that one resumes
// it. Nothing is written through a link under the output location (safe-path.ts), and a file
// reelflow did not write is never replaced unless the job says so (docs/files.md).
import { randomBytes } from 'node:crypto';
import { open, readdir, rm, rmdir } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Readable, finished } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DigestStream, hashFilePrefix } from './objects/digest';
import { ForeignFileError, SizeMismatchError, errnoCode, errorMessage } from './objects/errors';
import { S3_RESERVED_DIR as RECORDS_DIR } from './inputs/refs';
import type { ManifestRow } from './manifest/row';
import { encodeManifestRow, parseManifest } from './manifest/codec';
import { ManifestDigestIndex } from './manifest/digests';
import type { ManifestSnapshot } from './manifest/log';
import { MANIFEST_FILE, PART_RECORD_SUFFIX, PART_SUFFIX } from '../domain/output';
import { checkObjectName } from './objects/names';
import { PartFileWriter } from './objects/part-file';
import { UnsafePathError, lstatOrUndefined, openFile, openUnder, renameUnder, safeDir } from './objects/safe-path';
import { KeyedSerializer } from './objects/serial';
import { StorageError } from './objects/errors';
import type { ManifestCursor, ManifestPage, ManifestRead } from './manifest/log';
import type { Storage } from './storage';
import type { StartCheck, StoredObject, WriteOptions, WriteResult } from './objects/store';

export class LocalStorage implements Storage {
  readonly location: string;
  private readonly manifestPath: string;
  private readonly serial = new KeyedSerializer();
  /** sha256 per file from the manifest, read incrementally (the manifest only grows). */
  private readonly digests = new ManifestDigestIndex((cursor) => this.readManifestSince(cursor));

  constructor(dir: string) {
    this.location = resolve(dir);
    this.manifestPath = join(this.location, MANIFEST_FILE);
  }

  localPath(name: string): string {
    return join(this.location, ...checkObjectName(name).split('/'));
  }

  /** The object under its final name; a link or anything but a regular file there is no object of ours. */
  async stat(name: string): Promise<StoredObject | undefined> {
    const path = this.localPath(name);
    const st = await lstatOrUndefined(path).catch((err: unknown) => {
      throw fsError(`cannot stat ${path}`, err);
    });
    if (!st?.isFile()) return undefined;
    const sha256 = (await this.manifestSha256(name, path, st.size)) ?? (await hashFile(path));
    return { name, bytes: st.size, sha256 };
  }

  async partialBytes(name: string, owner?: string): Promise<number> {
    const partPath = this.localPath(name) + PART_SUFFIX;
    const st = await lstatOrUndefined(partPath).catch(() => undefined);
    if (!st?.isFile()) return 0;
    if (owner !== undefined && (await this.partOwner(name)) !== owner) return 0;
    return st.size;
  }

  async discardPartial(name: string): Promise<void> {
    const partPath = this.localPath(name) + PART_SUFFIX;
    await rm(partPath, { force: true });
    await rm(partPath.slice(0, -PART_SUFFIX.length) + PART_RECORD_SUFFIX, { force: true });
  }

  async write(name: string, body: Readable, options: WriteOptions & { resumeFrom?: number } = {}): Promise<WriteResult> {
    const finalPath = this.localPath(name);
    const partName = name + PART_SUFFIX;
    const partPath = finalPath + PART_SUFFIX;
    const folder = name.includes('/') ? name.slice(0, name.lastIndexOf('/')) : '';
    const resumeFrom = options.resumeFrom ?? 0;
    let digest: DigestStream;
    let dir: string;
    try {
      const made = await safeDir(this.location, folder, true);
      dir = made.path;
      if (made.created !== undefined) await fsyncDirs(dirname(made.created), dir);
      await refuseLinkedPart(partPath);
      if (resumeFrom === 0) {
        // A fresh write makes a new part (exclusively, see PartFileWriter): nothing old is written through.
        await this.discardPartial(name);
        if (options.partOwner !== undefined) await this.recordPartOwner(name, options.partOwner);
      } else {
        if (options.partOwner !== undefined && (await this.partOwner(name)) !== options.partOwner) {
          throw new StorageError(`${name}: cannot resume at byte ${resumeFrom}: the kept partial write is not this download's`);
        }
        await trimPartForResume(name, partPath, resumeFrom);
      }
      digest = new DigestStream({
        name,
        resumed: { bytes: resumeFrom, hash: await hashFilePrefix(partPath, resumeFrom) },
        expectedBytes: options.expectedBytes,
        maxBytes: options.maxBytes,
        onProgress: options.onProgress,
        checkShortAtEnd: false,
      });
    } catch (err) {
      body.destroy();
      throw err instanceof StorageError ? err : fsError(`cannot prepare ${partPath}`, err);
    }

    // The body is piped by hand: when it fails (a cut download) the digest is ended, not
    // destroyed, so every byte that arrived still reaches the part (written and fsynced) for a resume.
    let bodyError: unknown;
    finished(body, (err) => {
      if (!err) return;
      bodyError ??= err;
      if (!digest.writableEnded) digest.end();
    });
    body.pipe(digest);
    try {
      await pipeline(digest, new PartFileWriter(partPath, resumeFrom));
    } catch (err) {
      body.unpipe(digest);
      body.destroy();
      // Too many bytes (more than expected, or than output.max_bytes): the part is useless for a resume.
      if (digest.sizeError && err === digest.sizeError) {
        await this.discardPartial(name);
        throw digest.sizeError;
      }
      await fsyncFile(partPath).catch(() => undefined);
      throw err instanceof StorageError ? err : fsError(`cannot write ${partPath}`, err);
    }
    // The caller classifies its own body's error (e.g. a cut download, to resume with Range).
    if (bodyError !== undefined) throw bodyError;
    // A short body: every byte that came is in the part, durable, ready for a resume.
    if (options.expectedBytes !== undefined && digest.bytes !== options.expectedBytes) {
      throw new SizeMismatchError(name, options.expectedBytes, digest.bytes, true);
    }
    const sha256 = digest.sha256;
    try {
      // The whole file is checked, not only the bytes of this attempt: a resumed part's start too.
      if (options.checkStart) await checkPartStart(partPath, options.checkStart);
      if (!options.overwrite) await this.refuseForeign(name, finalPath, digest.bytes, sha256);
    } catch (err) {
      await this.discardPartial(name);
      throw err;
    }
    try {
      // The ledger lists stored videos; records under .reelflow/ are reelflow's own (putRecord).
      if (!name.startsWith(RECORDS_DIR)) await this.noteWritten(name, digest.bytes, sha256);
      await renameUnder(this.location, partName, name);
      await fsyncDirs(dir, dir);
      await rm(partPath.slice(0, -PART_SUFFIX.length) + PART_RECORD_SUFFIX, { force: true });
    } catch (err) {
      throw err instanceof StorageError ? err : fsError(`cannot commit ${finalPath}`, err);
    }
    return { name, bytes: digest.bytes, sha256, location: finalPath };
  }

  /**
   * A file already under the final name is replaced only when reelflow wrote it: a manifest row
   * names it with its size and digest, the ledger of stored videos does (a video stored by an item
   * that ended before its row was written: a canceled run), or it holds exactly the bytes being
   * stored (the same download again after a worker died).
   */
  private async refuseForeign(name: string, finalPath: string, bytes: number, sha256: string): Promise<void> {
    const found = await lstatOrUndefined(finalPath);
    if (!found) return;
    if (found.isSymbolicLink()) throw new UnsafePathError(finalPath, 'a symbolic link');
    if (!found.isFile()) throw new ForeignFileError(finalPath);
    const actual = await hashFile(finalPath);
    if (actual === sha256 && found.size === bytes) return;
    if ((await this.manifestSha256(name, finalPath, found.size)) === actual) return;
    if (await this.ledgerHas(name, found.size, actual)) return;
    throw new ForeignFileError(finalPath);
  }

  /**
   * Notes a video about to be committed in the ledger of stored videos (WRITTEN_LEDGER), one line
   * per video, before its rename: what reelflow stored, whatever the item's row says later.
   */
  private noteWritten(name: string, bytes: number, sha256: string): Promise<void> {
    const line = Buffer.from(`${JSON.stringify({ file: name, bytes, sha256 })}\n`);
    return this.serial.run(WRITTEN_LEDGER, async () => {
      const fh = await openUnder(this.location, WRITTEN_LEDGER, 'append');
      try {
        await terminateTornLine(fh);
        await writeAll(fh, line);
        await fh.sync();
      } finally {
        await fh.close();
      }
    });
  }

  private async ledgerHas(name: string, bytes: number, sha256: string): Promise<boolean> {
    let fh;
    try {
      fh = await openUnder(this.location, WRITTEN_LEDGER, 'read');
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return false;
      throw err;
    }
    try {
      const text = await fh.readFile({ encoding: 'utf8' });
      return text.split('\n').some((line) => {
        try {
          const entry = JSON.parse(line) as { file?: unknown; bytes?: unknown; sha256?: unknown };
          return entry.file === name && entry.bytes === bytes && entry.sha256 === sha256;
        } catch {
          return false;
        }
      });
    } finally {
      await fh.close();
    }
  }

  /** The owner recorded beside the part, or undefined (none, unreadable, or not a plain file). */
  private async partOwner(name: string): Promise<string | undefined> {
    let fh;
    try {
      fh = await openFile(this.localPath(name) + PART_RECORD_SUFFIX, 'read');
      const text = (await fh.readFile({ encoding: 'utf8' })).slice(0, 4096);
      const owner = (JSON.parse(text) as { owner?: unknown }).owner;
      return typeof owner === 'string' ? owner : undefined;
    } catch {
      return undefined;
    } finally {
      await fh?.close();
    }
  }

  private async recordPartOwner(name: string, owner: string): Promise<void> {
    const fh = await openUnder(this.location, name + PART_RECORD_SUFFIX, 'create');
    try {
      await writeAll(fh, Buffer.from(`${JSON.stringify({ owner })}\n`));
    } finally {
      await fh.close();
    }
  }

  /** Appends one line with one write (O_APPEND) and fsyncs; serialised per file within the process. */
  appendManifest(row: ManifestRow): Promise<void> {
    const line = Buffer.from(encodeManifestRow(row));
    return this.serial.run(this.manifestPath, async () => {
      let fh;
      try {
        const { created } = await safeDir(this.location, '', true);
        if (created !== undefined) await fsyncDirs(dirname(created), this.location);
        const existed = (await lstatOrUndefined(this.manifestPath)) !== undefined;
        fh = await openUnder(this.location, MANIFEST_FILE, 'append');
        await terminateTornLine(fh);
        await writeAll(fh, line);
        await fh.sync();
        if (!existed) await fsyncDirs(this.location, this.location);
      } catch (err) {
        throw err instanceof StorageError ? err : fsError(`cannot append to ${this.manifestPath}`, err);
      } finally {
        await fh?.close();
      }
    });
  }

  async readManifest(): Promise<ManifestRead> {
    const { rows, skipped } = await this.readManifestSince(undefined);
    return { rows, skipped };
  }

  /**
   * manifest.jsonl is already the whole truth here (one file, appended in place): this only checks
   * that it reads, and counts its items. It is never rewritten, so no line of it is ever lost.
   */
  async snapshotManifest(): Promise<ManifestSnapshot> {
    const fh = await this.openManifestToRead();
    if (!fh) return { location: this.manifestPath, items: 0 };
    try {
      return { location: this.manifestPath, items: await countManifestItems(fh, this.manifestPath) };
    } catch (err) {
      throw fsError(`cannot read ${this.manifestPath}`, err);
    } finally {
      await fh.close();
    }
  }

  /** manifest.jsonl opened for reading; undefined while there is none. */
  private async openManifestToRead(): Promise<FileHandle | undefined> {
    try {
      return await openUnder(this.location, MANIFEST_FILE, 'read');
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return undefined;
      throw err instanceof StorageError ? err : fsError(`cannot read ${this.manifestPath}`, err);
    }
  }

  /** Reads only the bytes appended since `cursor` (all of them if the file was replaced or shrank). */
  async readManifestSince(cursor: ManifestCursor | undefined): Promise<ManifestPage> {
    const fh = await this.openManifestToRead();
    if (!fh) return { rows: [], skipped: [], fromStart: true, cursor: undefined };
    try {
      const st = await fh.stat();
      const at = cursor as LocalCursor | undefined;
      const sameFile = at !== undefined && at.ino === st.ino && at.born === st.birthtimeMs && st.size >= at.offset;
      const continued = sameFile ? await readAfter(fh, at, st.size) : undefined;
      const fromStart = continued === undefined;
      // `bytes` starts with the cursor's tail when continuing; the new tail comes from the same
      // read, so a file rewritten between two reads cannot pair one file's offset with another's bytes.
      const bytes = continued ?? (await readRange(fh, 0, st.size));
      const skip = fromStart ? 0 : at!.tail.length;
      const linesBefore = fromStart ? 0 : at!.lines;
      const parsed = parseManifest(bytes.subarray(skip), { file: this.manifestPath, firstLine: linesBefore + 1 });
      const consumedEnd = skip + parsed.completeLength;
      const tail = Buffer.from(bytes.subarray(Math.max(0, consumedEnd - MANIFEST_TAIL_BYTES), consumedEnd));
      const offset = (fromStart ? 0 : at!.offset) + parsed.completeLength;
      const next: LocalCursor = { ino: st.ino, born: st.birthtimeMs, offset, tail, lines: linesBefore + parsed.lines };
      return { rows: parsed.rows, skipped: parsed.skipped, fromStart, cursor: next as unknown as ManifestCursor };
    } catch (err) {
      throw fsError(`cannot read ${this.manifestPath}`, err);
    } finally {
      await fh.close();
    }
  }

  /** Every finished object, by name; skips the manifest, `.part` files and dot-files (probes, temp files). */
  async list(): Promise<StoredObject[]> {
    await this.digests.refresh();
    const out: StoredObject[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') return;
        throw fsError(`cannot list ${dir}`, err);
      }
      for (const entry of entries) {
        if (entry.name.startsWith('.') || entry.name.endsWith(PART_SUFFIX) || entry.name.endsWith(PART_RECORD_SUFFIX)) continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) await walk(path);
        else if (entry.isFile() && path !== this.manifestPath) {
          const st = await lstatOrUndefined(path).catch(() => undefined);
          if (!st?.isFile()) continue;
          const name = relative(this.location, path).split(sep).join('/');
          out.push({ name, bytes: st.size, sha256: this.digests.known([name, path], st.size) });
        }
      }
    };
    await walk(this.location);
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async checkWritable(): Promise<void> {
    const probeName = `.reelflow-write-check-${process.pid}-${randomBytes(4).toString('hex')}`;
    const probe = join(this.location, probeName);
    // The folders this check creates, the outermost first: it removes them again, so that a check
    // (doctor, a run that stops before its job starts) leaves nothing behind.
    let createdFrom: string | undefined;
    try {
      // A planted link where the manifest goes is named before anything starts.
      const manifest = await lstatOrUndefined(this.manifestPath);
      if (manifest?.isSymbolicLink()) throw new UnsafePathError(this.manifestPath, 'a symbolic link');
      if (manifest && !manifest.isFile()) throw new UnsafePathError(this.manifestPath, 'not a regular file');
      if (manifest && manifest.nlink > 1)
        throw new UnsafePathError(this.manifestPath, `a file with ${manifest.nlink - 1} other hard link(s)`);
      createdFrom = (await safeDir(this.location, '', true)).created;
      const fh = await openUnder(this.location, probeName, 'create');
      try {
        await fh.write('ok\n');
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (err) {
      if (err instanceof UnsafePathError) throw err;
      const code = errnoCode(err);
      const why =
        code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EROFS'
            ? 'read-only file system'
            : code === 'ENOSPC'
              ? 'no space left on the device'
              : code === 'ENOTDIR' || code === 'EEXIST'
                ? 'a path component is a file, not a directory'
                : errorMessage(err);
      throw new StorageError(`output directory ${this.location} is not writable: ${why}`, { cause: err });
    } finally {
      await rm(probe, { force: true }).catch(() => undefined);
      if (createdFrom) await removeEmptyFolders(this.location, createdFrom);
    }
  }

  /**
   * Through write(): the record lands whole (part, fsync, rename) or not at all. A record is
   * reelflow's own file, replaced by every newer one (overwrite), never through a link.
   */
  async putRecord(name: string, text: string): Promise<void> {
    await this.write(RECORDS_DIR + name, Readable.from([Buffer.from(text, 'utf8')]), { overwrite: true });
  }

  async getRecord(name: string, maxBytes: number): Promise<string | undefined> {
    const path = this.localPath(RECORDS_DIR + name);
    let fh;
    try {
      // A link put where a record (or a folder of records) belongs is refused, not read through.
      fh = await openUnder(this.location, RECORDS_DIR + name, 'read');
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      if (err instanceof StorageError) throw err;
      throw fsError(`cannot read ${path}`, err);
    }
    try {
      const st = await fh.stat();
      if (st.size > maxBytes) throw new StorageError(`${path} holds ${st.size} bytes, more than a record may (${maxBytes}): remove it`);
      return (await readRange(fh, 0, st.size)).toString('utf8');
    } finally {
      await fh.close();
    }
  }

  /** Plain files only: a link or folder planted among the records is no record (safeDir refuses a linked folder). */
  async listRecords(folder: string): Promise<string[]> {
    const { path } = await safeDir(this.location, RECORDS_DIR + folder, false);
    let entries;
    try {
      entries = await readdir(path, { withFileTypes: true });
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return [];
      throw fsError(`cannot list ${path}`, err);
    }
    return entries
      .filter((e) => e.isFile() && !e.name.endsWith(PART_SUFFIX) && !e.name.endsWith(PART_RECORD_SUFFIX))
      .map((e) => `${folder}/${e.name}`)
      .sort();
  }

  private manifestSha256(name: string, path: string, bytes: number): Promise<string | undefined> {
    return this.digests.lookup([name, path], bytes);
  }
}

/**
 * Every video this storage committed, one JSON line each (file, bytes, sha256), so a file reelflow
 * stored is told from one it did not even when no manifest row names it (docs/files.md). A dot-file:
 * list() and the report skip it.
 */
const WRITTEN_LEDGER = '.reelflow-stored.jsonl';

/** How many of the last bytes read a manifest cursor keeps, to recognise the file next time. */
const MANIFEST_TAIL_BYTES = 64;

/**
 * The items a manifest names, read a chunk at a time: parsed whole, a 30,000-item job's manifest
 * was its worker's largest moment (+30 MiB at the job's end; BENCHMARKS.md, "memory", the runs of 2026-11-25 from 16:21 UTC).
 */
export async function countManifestItems(fh: FileHandle, file: string, chunkBytes = 1 << 20): Promise<number> {
  const keys = new Set<string>();
  let offset = 0;
  let lines = 0;
  let torn = Buffer.alloc(0);
  for (;;) {
    const chunk = await readRange(fh, offset, offset + chunkBytes);
    if (chunk.length === 0) return keys.size;
    offset += chunk.length;
    const bytes = torn.length > 0 ? Buffer.concat([torn, chunk]) : chunk;
    const parsed = parseManifest(bytes, { file, firstLine: lines + 1 });
    for (const row of parsed.rows) keys.add(row.key);
    lines += parsed.lines;
    torn = Buffer.from(bytes.subarray(parsed.completeLength));
  }
}

async function readRange(fh: FileHandle, from: number, to: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(Math.max(0, to - from));
  const { bytesRead } = await fh.read(buf, 0, buf.length, from);
  return buf.subarray(0, bytesRead);
}

/**
 * Where a reader of the local manifest got to: which file (inode and birth time: a deleted file's
 * inode number is soon reused) and the bytes read, with the last of those bytes. Some file systems
 * report no birth time, and a file rewritten in place keeps its inode: a reader that finds other
 * bytes before its offset knows the file is not the one it was reading.
 */
interface LocalCursor {
  ino: number;
  born: number;
  offset: number;
  /** Up to the last 64 bytes before `offset`. */
  tail: Buffer;
  /** Lines before `offset`: the next line's number, less one (warnings name lines). */
  lines: number;
}

/**
 * The cursor's tail and every byte after it, or undefined when the bytes before the offset are not
 * the ones it saw (another file; a rewrite that kept those 64 bytes, timestamps included, is not seen).
 */
async function readAfter(fh: FileHandle, cursor: LocalCursor, size: number): Promise<Buffer | undefined> {
  const bytes = await readRange(fh, cursor.offset - cursor.tail.length, size);
  return bytes.subarray(0, cursor.tail.length).equals(cursor.tail) ? bytes : undefined;
}

/**
 * A part that is a link (or anything but a file) was not made by us: following it would overwrite
 * whatever it points at. It is refused, saying so, and left for the user to look at.
 */
async function refuseLinkedPart(partPath: string): Promise<void> {
  const found = await lstatOrUndefined(partPath);
  if (found && !found.isFile()) throw new UnsafePathError(partPath, found.isSymbolicLink() ? 'a symbolic link' : 'not a regular file');
}

/** For a resume: checks the kept part covers `resumeFrom` and trims any excess (it is hashed with the rest). */
async function trimPartForResume(name: string, partPath: string, resumeFrom: number): Promise<void> {
  const fh = await openFile(partPath, 'update').catch((err: unknown) => {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  });
  try {
    const have = (await fh?.stat())?.size ?? 0;
    if (have < resumeFrom) {
      throw new StorageError(`${name}: cannot resume at byte ${resumeFrom}: the kept partial write has ${have} bytes`);
    }
    if (have > resumeFrom) await fh!.truncate(resumeFrom);
  } finally {
    await fh?.close();
  }
}

/** Reads the first bytes of the finished part (never through a link) for `check`. */
async function checkPartStart(partPath: string, check: StartCheck): Promise<void> {
  const fh = await openFile(partPath, 'read');
  try {
    check.check(await readRange(fh, 0, check.bytes));
  } finally {
    await fh.close();
  }
}

type FileHandle = Awaited<ReturnType<typeof open>>;

/**
 * A crash mid-append can leave a last line without its newline. Before appending, end that
 * fragment with a newline so the new row starts on its own line. Nothing is truncated: another
 * process may be appending too, and the readers skip a line that is not a row.
 */
async function terminateTornLine(fh: FileHandle): Promise<void> {
  const { size } = await fh.stat();
  if (size === 0) return;
  const last = Buffer.alloc(1);
  await fh.read(last, 0, 1, size - 1);
  if (last[0] === 0x0a) return;
  await writeAll(fh, Buffer.from('\n'));
}

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let offset = 0;
  while (offset < buf.length) {
    const { bytesWritten } = await fh.write(buf, offset, buf.length - offset);
    offset += bytesWritten;
  }
}

export async function hashFile(path: string): Promise<string> {
  return (await hashFilePrefix(path)).digest('hex');
}

async function fsyncFile(path: string): Promise<void> {
  const fh = await openFile(path, 'update');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** fsyncs `to` and each of its ancestors up to `from` (so newly created directories are durable too). */
async function fsyncDirs(from: string, to: string): Promise<void> {
  for (let dir = to; ; dir = dirname(dir)) {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } catch (err) {
      // Some file systems cannot fsync a directory; the rename is as durable as they allow.
      if (errnoCode(err) !== 'EINVAL' && errnoCode(err) !== 'EISDIR') throw err;
    } finally {
      await fh.close();
    }
    if (dir === from || !isAbsolute(dir) || dirname(dir) === dir || from.length >= dir.length) break;
  }
}

function fsError(what: string, err: unknown): StorageError {
  return new StorageError(`${what}: ${errorMessage(err)}`, { cause: err });
}

/** Removes `dir` and its parents up to `outermost` while they are empty (rmdir refuses any that is not). */
async function removeEmptyFolders(dir: string, outermost: string): Promise<void> {
  for (let path = dir; ; path = dirname(path)) {
    const removed = await rmdir(path).then(
      () => true,
      () => false,
    );
    if (!removed || path === outermost || dirname(path) === path) return;
  }
}
