// The one place sha256 is taken of a video: on its way to storage (DigestStream, both backends) or
// from a file already on disk (hashFilePrefix: a resumed part's kept bytes, a file the manifest
// does not know). It runs on the main thread: on the download bench (BENCHMARKS.md, 2026-11-24) a
// hashing thread was no faster, at loopback speed or at 100 MB/s, and cost more CPU and memory.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import { SizeMismatchError, TooLargeError } from './errors';
import { StorageError } from './errors';

export interface DigestOptions {
  /** Object name, for error messages. */
  name: string;
  /** A resumed write: the bytes already stored, and a hash fed with them (see hashFilePrefix). */
  resumed?: { bytes: number; hash: Hash };
  /** Fail unless the object ends at exactly this many bytes (counting the resumed ones). */
  expectedBytes?: number;
  /** Fail as soon as more than this many bytes arrive, whatever was expected (output.max_bytes). */
  maxBytes?: number;
  onProgress?: (bytesSoFar: number) => void;
  /**
   * Fail at the end of the stream when fewer than `expectedBytes` arrived (default true), before
   * the sink can commit. Local storage turns this off and checks after its sink has flushed, so
   * that every byte that arrived is kept in the `.part` for a resume.
   */
  checkShortAtEnd?: boolean;
  /**
   * Hand chunks on one by one instead of concatenated (a byte-mode Readable joins everything
   * buffered on each read): saves a full copy when the consumer assembles its own parts (S3).
   */
  passChunks?: boolean;
}

/**
 * A pass-through that hashes (sha256) and counts the bytes flowing to storage, so neither backend
 * buffers the object. It fails the stream as soon as more than `expectedBytes` arrive and, at the
 * end, when fewer did: the failure then reaches the sink before it commits anything.
 */
export class DigestStream extends Transform {
  private readonly hash: Hash;
  private total: number;
  private digestHex: string | undefined;
  /** Why the stream failed because of a size check (not a body or sink error). */
  sizeError: SizeMismatchError | TooLargeError | undefined;

  constructor(private readonly options: DigestOptions) {
    super(
      options.passChunks
        ? { writableHighWaterMark: 1 << 20, readableObjectMode: true, readableHighWaterMark: 16 }
        : { highWaterMark: 1 << 20 },
    );
    this.hash = options.resumed?.hash ?? createHash('sha256');
    this.total = options.resumed?.bytes ?? 0;
  }

  get bytes(): number {
    return this.total;
  }

  /** Hex sha256 of the whole object; only after the stream ended successfully. */
  get sha256(): string {
    if (this.digestHex === undefined) throw new Error('DigestStream: sha256 read before the stream ended');
    return this.digestHex;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.total += chunk.length;
    const { expectedBytes, maxBytes } = this.options;
    if (maxBytes !== undefined && this.total > maxBytes) {
      this.sizeError = new TooLargeError(this.options.name, maxBytes);
      callback(this.sizeError);
      return;
    }
    if (expectedBytes !== undefined && this.total > expectedBytes) {
      this.sizeError = new SizeMismatchError(this.options.name, expectedBytes, this.total, false);
      callback(this.sizeError);
      return;
    }
    this.hash.update(chunk);
    this.options.onProgress?.(this.total);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const { expectedBytes } = this.options;
    if (expectedBytes !== undefined && this.total !== expectedBytes && this.options.checkShortAtEnd !== false) {
      this.sizeError = new SizeMismatchError(this.options.name, expectedBytes, this.total, false);
      callback(this.sizeError);
      return;
    }
    this.digestHex = this.hash.digest('hex');
    callback();
  }
}

/** A sha256 fed with a file's first `bytes` bytes (all of it when undefined). */
export async function hashFilePrefix(path: string, bytes?: number): Promise<Hash> {
  const hash = createHash('sha256');
  if (bytes === 0) return hash;
  const stream = createReadStream(path, { highWaterMark: 1 << 20, ...(bytes !== undefined ? { end: bytes - 1 } : {}) });
  let seen = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    seen += chunk.length;
  }
  if (bytes !== undefined && seen !== bytes) throw new StorageError(`cannot hash ${path}: it ends at byte ${seen}, before byte ${bytes}`);
  return hash;
}
