import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { SizeMismatchError } from './errors';

export interface DigestOptions {
  /** Object name, for error messages. */
  name: string;
  /** Bytes already in the object before this stream (a resumed write); they are not re-counted here. */
  startBytes?: number;
  /** Hash state already fed with the first `startBytes` bytes. */
  hash?: Hash;
  /** Fail unless the object ends at exactly this many bytes (counting `startBytes`). */
  expectedBytes?: number;
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
  sizeError: SizeMismatchError | undefined;

  constructor(private readonly options: DigestOptions) {
    super(options.passChunks ? { writableHighWaterMark: 1 << 20, readableObjectMode: true, readableHighWaterMark: 16 } : { highWaterMark: 1 << 20 });
    this.hash = options.hash ?? createHash('sha256');
    this.total = options.startBytes ?? 0;
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
    const { expectedBytes } = this.options;
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
