// The local write path's one stream stage: bytes go from the body straight into `<name>.part`
// with positioned vectored writes, the hashing thread reads them back behind the writer, and the
// part is flushed to disk as it grows so that committing it does not wait on a whole file's fsync.
import { open, type FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { FileDigest } from './digest';
import { SizeMismatchError } from './errors';

export interface PartFileOptions {
  /** Object name, for error messages. */
  name: string;
  /** Bytes the part already holds (a resumed write); writing continues there and they are hashed too. */
  startBytes: number;
  /** Fail as soon as the object would grow past this many bytes (counting `startBytes`). */
  expectedBytes?: number;
  onProgress?: (bytesSoFar: number) => void;
}

// While one write is in flight, arriving chunks queue here and go out together in the next
// writev: a few large writes instead of one per 64 KiB socket read. (Of 1, 4 and 16 MiB, 4 MiB
// gave the fastest 1 GiB download.)
const WRITE_QUEUE_BYTES = 4 << 20;

// Every this many bytes, an fdatasync starts in the background. The kernel then writes the part
// out while the download goes on, so the fsync before the rename only has the last stretch left
// (a whole 1 GiB file took 0.3-0.7 s to flush at the end, now about 30 ms), and one download
// holds few dirty pages.
const SYNC_AHEAD_BYTES = 64 << 20;

/** Writes, hashes and flushes one part file; `end()` it to fsync, then read `sha256()`. */
export class PartFileWriter extends Writable {
  private handle: FileHandle | undefined;
  private digest: FileDigest | undefined;
  private digestResult: Promise<string> | undefined;
  private position: number;
  private syncedTo: number;
  private syncing: Promise<void> | undefined;
  private syncError: Error | undefined;
  /** Why the write failed because of the size check (not an I/O error). */
  sizeError: SizeMismatchError | undefined;

  constructor(private readonly path: string, private readonly options: PartFileOptions) {
    super({ highWaterMark: WRITE_QUEUE_BYTES });
    this.position = options.startBytes;
    this.syncedTo = options.startBytes;
  }

  /** Bytes in the part: the kept ones plus the ones written here. */
  get bytes(): number {
    return this.position;
  }

  /** Hex sha256 of the whole part; only once the writer has finished. */
  sha256(): Promise<string> {
    return this.digestResult ?? Promise.reject(new Error('PartFileWriter: sha256 asked before the write finished'));
  }

  override _construct(callback: (error?: Error | null) => void): void {
    open(this.path, this.options.startBytes > 0 ? 'r+' : 'w').then((handle) => {
      this.handle = handle;
      this.digest = new FileDigest(this.path);
      callback();
    }, callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.writeChunks([chunk], callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    this.writeChunks(chunks.map((entry) => entry.chunk), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.flushAll().then(() => {
      this.digestResult = this.digest?.finish(this.position);
      callback();
    }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.digestResult) this.digest?.cancel();
    const handle = this.handle;
    this.handle = undefined;
    if (!handle) {
      callback(error);
      return;
    }
    handle.close().then(() => callback(error), (closeError: Error) => callback(error ?? closeError));
  }

  private writeChunks(buffers: Buffer[], callback: (error?: Error | null) => void): void {
    let length = 0;
    for (const buffer of buffers) length += buffer.length;
    const { expectedBytes } = this.options;
    if (expectedBytes !== undefined && this.position + length > expectedBytes) {
      this.sizeError = new SizeMismatchError(this.options.name, expectedBytes, this.position + length, false);
      callback(this.sizeError);
      return;
    }
    if (this.syncError) {
      callback(this.syncError);
      return;
    }
    writeAll(this.openHandle(), buffers, this.position).then(() => {
      this.position += length;
      this.digest?.advance(this.position);
      this.options.onProgress?.(this.position);
      this.syncAhead();
      callback();
    }, callback);
  }

  private syncAhead(): void {
    if (!this.handle || this.syncing || this.position - this.syncedTo < SYNC_AHEAD_BYTES) return;
    const upTo = this.position;
    this.syncing = this.handle.datasync().then(
      () => { this.syncedTo = upTo; },
      (error: Error) => { this.syncError ??= error; },
    ).finally(() => { this.syncing = undefined; });
  }

  /** The fsync that makes the part durable (metadata included), after any background flush. */
  private async flushAll(): Promise<void> {
    await this.syncing;
    if (this.syncError) throw this.syncError;
    await this.openHandle().sync();
  }

  private openHandle(): FileHandle {
    if (!this.handle) throw new Error(`PartFileWriter: ${this.path} is not open`);
    return this.handle;
  }
}

/** pwritev until every byte is written (a regular file may take fewer bytes than asked). */
async function writeAll(handle: FileHandle, buffers: Buffer[], position: number): Promise<void> {
  let pending = buffers.filter((buffer) => buffer.length > 0);
  while (pending.length > 0) {
    const { bytesWritten } = await handle.writev(pending, position);
    if (bytesWritten === 0) throw new Error('the file system accepted no bytes');
    position += bytesWritten;
    pending = dropWritten(pending, bytesWritten);
  }
}

/** The buffers minus their first `written` bytes. */
function dropWritten(buffers: Buffer[], written: number): Buffer[] {
  const rest: Buffer[] = [];
  let skip = written;
  for (const buffer of buffers) {
    if (skip >= buffer.length) {
      skip -= buffer.length;
      continue;
    }
    rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
    skip = 0;
  }
  return rest;
}
