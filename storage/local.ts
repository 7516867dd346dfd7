// Local directory storage. A video only ever appears under its final name complete and durable:
// bytes are hashed on their way (see digest) into `<name>.part` (see part-file), the part is fsynced,
// renamed, and the directory fsynced. A cut download keeps its `.part`, so the next attempt resumes
// with Range.
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readFile, readdir, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { finished, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DigestStream, hashFilePrefix } from './digest';
import { SizeMismatchError, errnoCode, errorMessage } from './errors';
import { latestRowByKey, type ManifestRow } from './manifest';
import { ManifestDigests, encodeManifestRow, parseManifest } from './manifest-codec';
import type { ManifestSnapshot } from './manifest-snapshot';
import { MANIFEST_FILE, PART_SUFFIX, checkObjectName } from './names';
import { OWNER_MARKER, decodeOwner, encodeOwner, type OutputOwner } from './owner';
import { PartFileWriter } from './part-file';
import { KeyedSerializer } from './serial';
import {
  StorageError,
  type ManifestCursor,
  type ManifestPage,
  type Storage,
  type StoredObject,
  type WriteOptions,
  type WriteResult,
} from './storage';

export class LocalStorage implements Storage {
  readonly location: string;
  private readonly manifestPath: string;
  private readonly serial = new KeyedSerializer();
  /** sha256 per file from the manifest, read incrementally (the manifest only grows). */
  private readonly digests = new ManifestDigests();
  private digestsFrom: ManifestCursor | undefined;

  constructor(dir: string) {
    this.location = resolve(dir);
    this.manifestPath = join(this.location, MANIFEST_FILE);
  }

  localPath(name: string): string {
    return join(this.location, ...checkObjectName(name).split('/'));
  }

  async stat(name: string): Promise<StoredObject | undefined> {
    const path = this.localPath(name);
    const st = await statOrUndefined(path);
    if (!st?.isFile()) return undefined;
    const sha256 = (await this.manifestSha256(name, path, st.size)) ?? (await hashFile(path));
    return { name, bytes: st.size, sha256 };
  }

  async partialBytes(name: string): Promise<number> {
    const st = await statOrUndefined(this.localPath(name) + PART_SUFFIX);
    return st?.isFile() ? st.size : 0;
  }

  async discardPartial(name: string): Promise<void> {
    await rm(this.localPath(name) + PART_SUFFIX, { force: true });
  }

  async write(name: string, body: Readable, options: WriteOptions & { resumeFrom?: number } = {}): Promise<WriteResult> {
    const finalPath = this.localPath(name);
    const partPath = finalPath + PART_SUFFIX;
    const dir = dirname(finalPath);
    const resumeFrom = options.resumeFrom ?? 0;
    let digest: DigestStream;
    try {
      const created = await mkdir(dir, { recursive: true });
      if (created !== undefined) await fsyncDirs(dirname(created), dir);
      await refuseLinkedPart(partPath);
      // A fresh write makes a new part (exclusively, see PartFileWriter): nothing old is written through.
      if (resumeFrom === 0) await rm(partPath, { force: true });
      await trimPartForResume(name, partPath, resumeFrom);
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
        await rm(partPath, { force: true });
        throw digest.sizeError;
      }
      await fsyncFile(partPath).catch(() => undefined);
      throw fsError(`cannot write ${partPath}`, err);
    }
    // The caller classifies its own body's error (e.g. a cut download, to resume with Range).
    if (bodyError !== undefined) throw bodyError;
    // A short body: every byte that came is in the part, durable, ready for a resume.
    if (options.expectedBytes !== undefined && digest.bytes !== options.expectedBytes) {
      throw new SizeMismatchError(name, options.expectedBytes, digest.bytes, true);
    }
    const sha256 = digest.sha256;
    try {
      await rename(partPath, finalPath);
      await fsyncDirs(dir, dir);
    } catch (err) {
      throw fsError(`cannot commit ${finalPath}`, err);
    }
    return { name, bytes: digest.bytes, sha256, location: finalPath };
  }

  /** Appends one line with one write (O_APPEND) and fsyncs; serialised per file within the process. */
  appendManifest(row: ManifestRow): Promise<void> {
    const line = Buffer.from(encodeManifestRow(row));
    return this.serial.run(this.manifestPath, async () => {
      let fh;
      try {
        const created = await mkdir(this.location, { recursive: true });
        if (created !== undefined) await fsyncDirs(dirname(created), this.location);
        const existed = (await statOrUndefined(this.manifestPath)) !== undefined;
        fh = await open(this.manifestPath, 'a+');
        await terminateTornLine(fh);
        await writeAll(fh, line);
        await fh.sync();
        if (!existed) await fsyncDirs(this.location, this.location);
      } catch (err) {
        throw fsError(`cannot append to ${this.manifestPath}`, err);
      } finally {
        await fh?.close();
      }
    });
  }

  async readManifest(): Promise<ManifestRow[]> {
    return (await this.readManifestSince(undefined)).rows;
  }

  /**
   * manifest.jsonl is already the whole truth here (one file, appended in place): this only checks
   * that it reads, and counts its items. It is never rewritten, so no line of it is ever lost.
   */
  async snapshotManifest(): Promise<ManifestSnapshot> {
    const rows = await this.readManifest();
    return { location: this.manifestPath, items: latestRowByKey(rows).size };
  }

  /** Reads only the bytes appended since `cursor` (all of them if the file was replaced or shrank). */
  async readManifestSince(cursor: ManifestCursor | undefined): Promise<ManifestPage> {
    let fh;
    try {
      fh = await open(this.manifestPath, 'r');
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return { rows: [], fromStart: true, cursor: undefined };
      throw fsError(`cannot read ${this.manifestPath}`, err);
    }
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
      const parsed = parseManifest(bytes.subarray(skip));
      const consumedEnd = skip + parsed.completeLength;
      const tail = Buffer.from(bytes.subarray(Math.max(0, consumedEnd - MANIFEST_TAIL_BYTES), consumedEnd));
      const offset = (fromStart ? 0 : at!.offset) + parsed.completeLength;
      const next: LocalCursor = { ino: st.ino, born: st.birthtimeMs, offset, tail };
      return { rows: parsed.rows, fromStart, cursor: next as unknown as ManifestCursor };
    } catch (err) {
      throw fsError(`cannot read ${this.manifestPath}`, err);
    } finally {
      await fh.close();
    }
  }

  /** Every finished object, by name; skips the manifest, `.part` files and dot-files (probes, temp files). */
  async list(): Promise<StoredObject[]> {
    await this.refreshDigests();
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
        if (entry.name.startsWith('.') || entry.name.endsWith(PART_SUFFIX)) continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) await walk(path);
        else if (entry.isFile() && path !== this.manifestPath) {
          const st = await statOrUndefined(path);
          if (!st) continue;
          const name = relative(this.location, path).split(sep).join('/');
          out.push({ name, bytes: st.size, sha256: this.digests.lookup([name, path], st.size) });
        }
      }
    };
    await walk(this.location);
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async readOwner(): Promise<OutputOwner | undefined> {
    try {
      return decodeOwner(await readFile(join(this.location, OWNER_MARKER), 'utf8'));
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return undefined;
      throw fsError(`cannot read ${join(this.location, OWNER_MARKER)}`, err);
    }
  }

  async writeOwner(owner: OutputOwner): Promise<void> {
    const path = join(this.location, OWNER_MARKER);
    try {
      await mkdir(this.location, { recursive: true });
      await writeFile(path, encodeOwner(owner));
    } catch (err) {
      throw fsError(`cannot write ${path}`, err);
    }
  }

  async checkWritable(): Promise<void> {
    const probe = join(this.location, `.reelflow-write-check-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      await mkdir(this.location, { recursive: true });
      const fh = await open(probe, 'wx');
      try {
        await fh.write('ok\n');
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (err) {
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
    }
  }

  private async manifestSha256(name: string, path: string, bytes: number): Promise<string | undefined> {
    await this.refreshDigests();
    return this.digests.lookup([name, path], bytes);
  }

  /** Reads only the manifest bytes appended since the last look (from the start if it was replaced). */
  private refreshDigests(): Promise<void> {
    return this.serial.run('digests', async () => {
      const page = await this.readManifestSince(this.digestsFrom);
      if (page.fromStart) this.digests.clear();
      this.digests.add(page.rows);
      this.digestsFrom = page.cursor;
    });
  }
}

/** How many of the last bytes read a manifest cursor keeps, to recognise the file next time. */
const MANIFEST_TAIL_BYTES = 64;

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
  const found = await lstat(partPath).catch((err: unknown) => {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  });
  if (found && !found.isFile()) {
    throw new StorageError(
      `${partPath} is ${found.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}: ` +
        'reelflow never writes through one (it could overwrite another file); remove it and run again',
    );
  }
}

/** For a resume: checks the kept part covers `resumeFrom` and trims any excess (it is hashed with the rest). */
async function trimPartForResume(name: string, partPath: string, resumeFrom: number): Promise<void> {
  if (resumeFrom <= 0) return;
  const have = (await statOrUndefined(partPath))?.size ?? 0;
  if (have < resumeFrom) {
    throw new StorageError(`${name}: cannot resume at byte ${resumeFrom}: the kept partial write has ${have} bytes`);
  }
  if (have > resumeFrom) await truncate(partPath, resumeFrom);
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

async function statOrUndefined(path: string) {
  try {
    return await stat(path);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw fsError(`cannot stat ${path}`, err);
  }
}

export async function hashFile(path: string): Promise<string> {
  return (await hashFilePrefix(path)).digest('hex');
}

async function fsyncFile(path: string): Promise<void> {
  const fh = await open(path, 'r+');
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
