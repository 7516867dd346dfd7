// The local write path's one stream stage: bytes are copied into a few staging blocks; each full
// block is written to `<name>.part` (with O_DIRECT where the file system allows, see direct-io)
// and hashed (see block-hasher) at the same time, and reused once both are done. The writer holds
// at most BLOCKS blocks of memory, whatever the file's size.
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import { blockHasher, type BlockHasher } from './block-hasher';
import { ALIGN, openPart, stagingArea } from './direct-io';
import { SizeMismatchError } from './errors';

export interface PartFileOptions {
  /** Object name, for error messages. */
  name: string;
  /** Bytes the part already holds (a resumed write); writing continues there and they are hashed too. */
  startBytes: number;
  /** Fail as soon as the object would grow past this many bytes (counting `startBytes`). */
  expectedBytes?: number;
  /** Bytes in the part so far (a prefix: blocks land in file order), after each block; fsynced only at the end. */
  onProgress?: (bytesSoFar: number) => void;
  /**
   * O_DIRECT where the file system takes it (default). REELFLOW_DIRECT_IO=off turns it off for a
   * file system that accepts O_DIRECT but handles it badly.
   */
  directIo?: boolean;
}

// Blocks of 2 MiB, three of them (one filling, two being written in order and hashed):
// 6 MiB of memory per download. On the benchmark VM, 1 MiB blocks were about 10 % slower, and a
// fourth block was not faster but pushed the download's RSS growth to 65 MiB in one round of three
// (the limit is 64). A smaller file gets a third of its size per block (at least a page), so that
// a worker with many short downloads in flight holds little: with a 64 KiB minimum the
// 10,000-item benchmark's worker peaked at 309 MiB, with this one at 289 MiB.
const MAX_BLOCK_BYTES = 2 << 20;
const MIN_BLOCK_BYTES = ALIGN;
const BLOCKS = 3;

/** Block size for a file expected to have `remaining` more bytes (unknown: the largest). */
function blockSizeFor(remaining: number | undefined): number {
  if (remaining === undefined) return MAX_BLOCK_BYTES;
  const share = Math.ceil(remaining / BLOCKS / ALIGN) * ALIGN;
  return Math.min(MAX_BLOCK_BYTES, Math.max(MIN_BLOCK_BYTES, share));
}

// Buffered writes only (no O_DIRECT): every this many bytes an fdatasync starts in the
// background, so that the kernel writes the part out while the download goes on and the fsync
// before the rename has only the last stretch left.
const SYNC_AHEAD_BYTES = 64 << 20;

interface QueuedWrite {
  view: Buffer;
  /** Bytes of the block that go out with the direct write (whole pages); the rest is the tail. */
  directLength: number;
  length: number;
  fileOffset: number;
  done: () => void;
}

interface Block {
  /** Offset of the block in the staging memory. */
  at: number;
  view: Buffer;
}

/** Writes, hashes and flushes one part file; `end()` it to fsync, then read `sha256()`. */
export class PartFileWriter extends Writable {
  private handle: FileHandle | undefined;
  private hasher: BlockHasher | undefined;
  private digest: Promise<string> | undefined;
  private direct = false;
  private blockBytes = MAX_BLOCK_BYTES;
  private readonly free: Block[] = [];
  private waitingForBlock: (() => void) | undefined;
  /** The block being filled, and where in the file it starts. */
  private current: Block | undefined;
  private filled = 0;
  private blockFileOffset = 0;
  /** Bytes of the current block that a resume carried over (already hashed with the prefix). */
  private carried = 0;
  /** Blocks waiting for the write in flight, in file order. */
  private readonly queued: QueuedWrite[] = [];
  private writing: Promise<void> | undefined;
  private writeError: Error | undefined;
  private durable: number;
  private syncedTo: number;
  private syncing: Promise<void> | undefined;
  /** Why the write failed because of the size check (not an I/O error). */
  sizeError: SizeMismatchError | undefined;

  constructor(private readonly path: string, private readonly options: PartFileOptions) {
    super({ highWaterMark: MAX_BLOCK_BYTES });
    this.blockFileOffset = options.startBytes;
    this.durable = options.startBytes;
    this.syncedTo = options.startBytes;
  }

  /** Bytes accepted so far: the kept ones plus the ones written or staged here. */
  get bytes(): number {
    return this.blockFileOffset + this.filled;
  }

  /** Hex sha256 of the whole part; only once the writer has finished. */
  sha256(): Promise<string> {
    return this.digest ?? Promise.reject(new Error('PartFileWriter: sha256 asked before the write finished'));
  }

  override _construct(callback: (error?: Error | null) => void): void {
    this.open().then(() => callback(), callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.accept(chunk, 0, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.flushAll().then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.digest) this.hasher?.cancel();
    const handle = this.handle;
    this.handle = undefined;
    // FileHandle.close() waits for a write still in flight.
    if (!handle) callback(error);
    else handle.close().then(() => callback(error), (closeError: Error) => callback(error ?? closeError));
  }

  private async open(): Promise<void> {
    const { startBytes, expectedBytes } = this.options;
    const wantDirect = this.options.directIo ?? process.env.REELFLOW_DIRECT_IO !== 'off';
    this.blockBytes = blockSizeFor(expectedBytes === undefined ? undefined : expectedBytes - startBytes);
    const area = await stagingArea(dirname(this.path), BLOCKS * this.blockBytes, wantDirect);
    this.direct = area.direct;
    if (this.direct) {
      this.handle = await openPart(this.path, startBytes === 0, true).catch(() => undefined);
      this.direct = this.handle !== undefined;
    }
    this.handle ??= await openPart(this.path, startBytes === 0, false);
    const kept = startBytes > 0 ? (await this.handle.stat()).size : 0;
    if (kept < startBytes) throw new Error(`${this.path} is shorter (${kept} bytes) than its kept ${startBytes} bytes`);
    for (let i = 0; i < BLOCKS; i++) {
      const at = area.start + i * this.blockBytes;
      this.free.push({ at, view: Buffer.from(area.memory, at, this.blockBytes) });
    }
    this.hasher = blockHasher({ memory: area.memory, path: this.path, prefixBytes: startBytes, expectedBytes });
    this.current = this.free.pop();
    // Direct writes start on an aligned offset: a resume re-writes the kept bytes of its last
    // partial page from the staging block (identical bytes; hashed already with the prefix).
    this.blockFileOffset = this.direct ? startBytes - (startBytes % ALIGN) : startBytes;
    this.carried = startBytes - this.blockFileOffset;
    if (this.carried > 0) {
      // Through a buffered handle: those few bytes are not a whole page, which O_DIRECT reads want.
      const plain = await open(this.path, 'r');
      try {
        const { bytesRead } = await plain.read({ buffer: this.current!.view, position: this.blockFileOffset, length: this.carried });
        if (bytesRead !== this.carried) throw new Error(`${this.path} changed while being resumed at byte ${startBytes}`);
      } finally {
        await plain.close();
      }
      this.filled = this.carried;
    }
  }

  /**
   * Copies `chunk` from `offset` into blocks, submitting each full one. Synchronous while blocks
   * are free (the common case: no promise per 64 KiB chunk on the download's hot path); when all
   * are busy it continues once one comes back.
   */
  private accept(chunk: Buffer, offset: number, callback: (error?: Error | null) => void): void {
    const { expectedBytes } = this.options;
    if (offset === 0 && expectedBytes !== undefined && this.bytes + chunk.length > expectedBytes) {
      this.sizeError = new SizeMismatchError(this.options.name, expectedBytes, this.bytes + chunk.length, false);
      callback(this.sizeError);
      return;
    }
    while (offset < chunk.length) {
      if (this.writeError) {
        callback(this.writeError);
        return;
      }
      if (!this.current) {
        const block = this.free.pop();
        if (!block) {
          this.waitingForBlock = () => this.accept(chunk, offset, callback);
          return;
        }
        this.current = block;
      }
      const copied = chunk.copy(this.current.view, this.filled, offset);
      this.filled += copied;
      offset += copied;
      if (this.filled === this.blockBytes) this.submit();
    }
    callback();
  }

  /** Sends the current block to be written and hashed; it comes back to `free` once both are done. */
  private submit(): void {
    const block = this.current!;
    const length = this.filled;
    const fileOffset = this.blockFileOffset;
    const hashFrom = this.carried;
    this.current = undefined;
    this.filled = 0;
    this.carried = 0;
    this.blockFileOffset += length;
    // A direct write takes whole pages; a short last block sends its tail through a buffered handle.
    const directLength = this.direct ? length - (length % ALIGN) : length;
    const hashed = this.hasher!.update(block.at + hashFrom, length - hashFrom);
    // Writes go out one after another, in file order, so that the part is always a prefix of the
    // video with no hole: a resume (after a failed write, or a process killed mid-download) trusts
    // the part's size. (Concurrent writes let a later block land before an earlier one, leaving
    // zeros that a resume would have kept.) Blocks that queue up behind a write go out together
    // in the next one (pwritev), which keeps a fast source from waiting on many small writes.
    const written = new Promise<void>((resolve) => {
      this.queued.push({ view: block.view, directLength, length, fileOffset, done: resolve });
    });
    this.pump();
    Promise.all([hashed, written]).then(() => this.release(block), (error: Error) => {
      this.writeError ??= error;
      this.release(block);
    });
  }

  /** Starts the next write with every queued block, unless one is in flight. */
  private pump(): void {
    if (this.writing || this.queued.length === 0) return;
    const batch = this.queued.splice(0);
    this.writing = this.writeBatch(batch)
      .catch((error: Error) => { this.writeError ??= error; })
      .finally(() => {
        for (const entry of batch) entry.done();
        this.writing = undefined;
        this.pump();
      });
  }

  private async writeBatch(batch: QueuedWrite[]): Promise<void> {
    if (this.writeError || this.destroyed) return;
    const first = batch[0]!;
    const last = batch[batch.length - 1]!;
    // Only the last block can be short, and only its whole pages go out directly.
    const buffers = batch.map((entry) => entry.view.subarray(0, entry.directLength));
    await writeAllv(this.openHandle(), buffers, first.fileOffset);
    if (last.directLength < last.length) {
      await writeTailBuffered(this.path, last.view.subarray(last.directLength, last.length), last.fileOffset + last.directLength);
    }
    this.durable = last.fileOffset + last.length;
    this.options.onProgress?.(this.durable);
    this.syncAhead();
  }

  private release(block: Block): void {
    this.free.push(block);
    const waiting = this.waitingForBlock;
    this.waitingForBlock = undefined;
    waiting?.();
  }

  private syncAhead(): void {
    if (this.direct || this.syncing || this.durable - this.syncedTo < SYNC_AHEAD_BYTES) return;
    const upTo = this.durable;
    this.syncing = this.openHandle().datasync().then(
      () => { this.syncedTo = upTo; },
      (error: Error) => { this.writeError ??= error; },
    ).finally(() => { this.syncing = undefined; });
  }

  /** Writes what is staged, waits for every write and hash, fsyncs (metadata included) and takes the digest. */
  private async flushAll(): Promise<void> {
    if (this.current && this.filled > this.carried) this.submit();
    // Every block back in `free` means every write and hash has settled.
    while (this.free.length < BLOCKS - (this.current ? 1 : 0)) await new Promise<void>((resolve) => { this.waitingForBlock = resolve; });
    if (this.writeError) throw this.writeError;
    await this.syncing;
    if (this.writeError) throw this.writeError;
    await this.openHandle().sync();
    this.digest = this.hasher!.finish();
    // Nobody asks for the digest of a write that failed later on; its failure must not go unhandled.
    this.digest.catch(() => undefined);
  }

  private openHandle(): FileHandle {
    if (!this.handle) throw new Error(`PartFileWriter: ${this.path} is not open`);
    return this.handle;
  }
}

/** pwritev until every byte is written (a regular file may take fewer bytes than asked); one buffer or several. */
async function writeAllv(handle: FileHandle, buffers: Buffer[], position: number): Promise<void> {
  let pending = buffers.filter((buffer) => buffer.length > 0);
  while (pending.length > 0) {
    const { bytesWritten } = await handle.writev(pending, position);
    if (bytesWritten === 0) throw new Error('the file system accepted no bytes');
    position += bytesWritten;
    let skip = bytesWritten;
    const rest: Buffer[] = [];
    for (const buffer of pending) {
      if (skip >= buffer.length) skip -= buffer.length;
      else {
        rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
        skip = 0;
      }
    }
    pending = rest;
  }
}

async function writeTailBuffered(path: string, tail: Buffer, position: number): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await writeAllv(handle, [tail], position);
  } finally {
    await handle.close();
  }
}
