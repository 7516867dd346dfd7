// A pass-through that counts and hashes bytes on their way to storage, and can insist on a size.
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { DownloadError } from './errors';

export interface VerifyingStreamOptions {
  /** Fail at the end unless exactly this many bytes passed. */
  expectedBytes?: number;
  /** Fail at the end unless the sha256 (hex) matches. */
  expectedSha256?: string;
  /** Called with the running byte count (throttle in the caller if needed). */
  onProgress?: (bytes: number) => void;
}

export class VerifyingStream extends Transform {
  private readonly hash: Hash = createHash('sha256');
  private count = 0;
  private digest?: string;

  constructor(private readonly options: VerifyingStreamOptions = {}) {
    super({ highWaterMark: 1 << 20 });
  }

  get bytes(): number {
    return this.count;
  }

  /** Hex sha256, available after 'end'/'finish'. */
  get sha256(): string | undefined {
    return this.digest;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.hash.update(chunk);
    this.count += chunk.length;
    this.options.onProgress?.(this.count);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.digest = this.hash.digest('hex');
    const { expectedBytes, expectedSha256 } = this.options;
    if (expectedBytes !== undefined && this.count !== expectedBytes) {
      callback(new DownloadError(`expected ${expectedBytes} bytes, got ${this.count}`, { bytesReceived: this.count }));
      return;
    }
    if (expectedSha256 !== undefined && this.digest !== expectedSha256.toLowerCase()) {
      callback(new DownloadError(`sha256 mismatch: expected ${expectedSha256}, got ${this.digest}`, { bytesReceived: this.count, retryable: false }));
      return;
    }
    callback();
  }
}

export function verifyingStream(options?: VerifyingStreamOptions): VerifyingStream {
  return new VerifyingStream(options);
}
