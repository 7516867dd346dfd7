// Uploads a stream of chunks as one S3 object with reused part buffers (see PartUploader), and the
// client middleware that lets each part's CRC32 stand in for SigV4's payload hash.
import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';

/**
 * SigV4 hashes every part body (sha256) to sign it, and the server hashes it again to check, on top
 * of the CRC32 checksum each request carries and the server verifies. Where that CRC32 header is
 * present, sign the part as UNSIGNED-PAYLOAD instead, as the SDK itself does for streamed bodies
 * (STREAMING-UNSIGNED-PAYLOAD-TRAILER): integrity stays verified end to end by the CRC, the
 * request (headers, key, checksum) stays signed, and a full sha256 pass per side is saved. Without
 * a CRC32 header (the default, see s3-client.ts) the payload stays signed.
 */
export function checksumInsteadOfPayloadHash(client: S3Client): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const headers = (args.request as { headers?: Record<string, string> } | undefined)?.headers;
      if (headers) {
        const names = Object.keys(headers).map((h) => h.toLowerCase());
        if (!names.includes('x-amz-content-sha256') && names.some((h) => /^x-amz-checksum-(crc32|crc32c|crc64nvme)$/.test(h))) {
          headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
        }
      }
      return next(args);
    },
    { step: 'build', priority: 'low', name: 'reelflowChecksumInsteadOfPayloadHash' },
  );
}

/** Signs a request with the sha256 of its body computed here, so the signer does not hash it again. */
function signedPayload<C extends PutObjectCommand | UploadPartCommand>(command: C, sha256Hex: string): C {
  // The command's stack takes what the client's takes; TypeScript cannot unify the two commands' stacks.
  (command.middlewareStack as unknown as S3Client['middlewareStack']).add(
    (next) => async (args) => {
      const headers = (args.request as { headers?: Record<string, string> } | undefined)?.headers;
      if (headers) headers['x-amz-content-sha256'] = sha256Hex;
      return next(args);
    },
    { step: 'build', name: 'reelflowSignedPayloadSha256' },
  );
  return command;
}

export interface UploadTarget {
  Bucket: string;
  Key: string;
  ContentType: string;
  /** User metadata (`x-amz-meta-…`), set when the object is created. */
  Metadata?: Record<string, string>;
}

/**
 * How each request proves its body to the store: a CRC32 header the store verifies (when the
 * client's requestChecksumCalculation is WHEN_SUPPORTED), or else the body's sha256 in the SigV4
 * signature, which the store recomputes (XAmzContentSHA256Mismatch when a byte changed).
 */
type PartChecksum = { crc32: string } | { sha256: string };

/**
 * Streams chunks into an S3 object: one PutObject when everything fits in one part, else a
 * multipart upload with up to `queueSize` parts in flight. Parts are assembled in at most
 * `queueSize + 1` buffers reused across parts, so memory stays flat in the object's size.
 * (lib-storage's Upload concatenates a fresh buffer per part instead: on the 2-core benchmark VM
 * the page faults of that fresh memory cost about 0.5 CPU-s per GiB, as much as the sha256.)
 *
 * Every request carries a checksum the server verifies (see PartChecksum). It is computed here,
 * chunk by chunk while each chunk is still in the CPU cache from the sha256 of the whole video,
 * rather than by the SDK over each whole part once it has left the cache (profiled for the CRC32:
 * 0.31 instead of 0.37 CPU-s per GiB).
 */
export class PartUploader {
  private readonly spare: Buffer[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly parts: CompletedPart[] = [];
  private partsSent = 0;
  private buffer: Buffer | undefined;
  private filled = 0;
  /** Whether parts carry a CRC32 header; decided by the client's configuration before the first byte. */
  private withCrc32: boolean | undefined;
  /** The checksum of the `filled` bytes of `buffer`: their CRC32 when withCrc32, else their sha256. */
  private crc = 0;
  private sha256: Hash | undefined;
  private uploadId: Promise<string> | undefined;
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly client: S3Client,
    private readonly target: UploadTarget,
    private readonly partSize: number,
    private readonly queueSize: number,
  ) {}

  /** Copies `chunk` into part buffers, sending each part once it is full and more bytes follow. */
  async add(chunk: Buffer): Promise<void> {
    const withCrc32 = this.withCrc32 ?? (await this.decideChecksum());
    for (let offset = 0; offset < chunk.length;) {
      if (this.filled === this.partSize) await this.sendPart();
      this.buffer ??= this.freeBuffer();
      const copied = chunk.copy(this.buffer, this.filled, offset);
      const bytes = chunk.subarray(offset, offset + copied);
      if (withCrc32) this.crc = crc32(bytes, this.crc);
      else (this.sha256 ??= createHash('sha256')).update(bytes);
      this.filled += copied;
      offset += copied;
    }
  }

  /** Whether the object went up as a multipart upload (more than one part's worth of bytes). */
  get multipart(): boolean {
    return this.uploadId !== undefined;
  }

  /** Sends what is left and commits the object; returns its ETag. */
  async finish(): Promise<string | undefined> {
    if (this.withCrc32 === undefined) await this.decideChecksum();
    if (this.uploadId === undefined) {
      const Body = this.buffer?.subarray(0, this.filled) ?? Buffer.alloc(0);
      const checksum = this.takeChecksum();
      const command =
        'crc32' in checksum
          ? new PutObjectCommand({ ...this.target, Body, ChecksumAlgorithm: 'CRC32', ChecksumCRC32: checksum.crc32 })
          : signedPayload(new PutObjectCommand({ ...this.target, Body }), checksum.sha256);
      return (await this.client.send(command)).ETag;
    }
    if (this.filled > 0) await this.sendPart();
    await this.settle();
    const MultipartUpload = { Parts: [...this.parts].sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0)) };
    const { Bucket, Key } = this.target;
    const UploadId = await this.uploadId;
    return (await this.client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload }))).ETag;
  }

  /** Drops the multipart upload, if one was started, once no part is in flight (so none lands after). */
  async abort(): Promise<void> {
    if (this.uploadId === undefined) return;
    await Promise.all(this.inFlight);
    const UploadId = await this.uploadId.catch(() => undefined);
    if (UploadId === undefined) return;
    const { Bucket, Key } = this.target;
    await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }));
  }

  /** The client's requestChecksumCalculation: WHEN_SUPPORTED sends CRC32 headers, anything else none. */
  private async decideChecksum(): Promise<boolean> {
    this.withCrc32 = (await this.client.config.requestChecksumCalculation()) === 'WHEN_SUPPORTED';
    return this.withCrc32;
  }

  private async sendPart(): Promise<void> {
    const buffer = this.buffer as Buffer;
    const Body = buffer.subarray(0, this.filled);
    const checksum = this.takeChecksum();
    const PartNumber = ++this.partsSent;
    this.buffer = undefined;
    this.filled = 0;
    this.uploadId ??= this.startUpload();
    const UploadId = await this.uploadId;
    while (this.inFlight.size >= this.queueSize) await Promise.race(this.inFlight);
    this.throwIfFailed();
    const part = { Bucket: this.target.Bucket, Key: this.target.Key, UploadId, PartNumber, Body };
    const command =
      'crc32' in checksum
        ? new UploadPartCommand({ ...part, ChecksumAlgorithm: 'CRC32', ChecksumCRC32: checksum.crc32 })
        : signedPayload(new UploadPartCommand(part), checksum.sha256);
    const sent: Promise<void> = this.client
      .send(command)
      .then(
        ({ ETag }) => {
          this.parts.push({ PartNumber, ETag, ...('crc32' in checksum ? { ChecksumCRC32: checksum.crc32 } : {}) });
          this.spare.push(buffer);
        },
        (error: unknown) => {
          this.failure ??= { error };
        },
      )
      .finally(() => this.inFlight.delete(sent));
    this.inFlight.add(sent);
  }

  /** The current part's checksum as S3 wants it (CRC32: base64 of the big-endian value); starts the next. */
  private takeChecksum(): PartChecksum {
    if (!this.withCrc32) {
      const sha256 = (this.sha256 ?? createHash('sha256')).digest('hex');
      this.sha256 = undefined;
      return { sha256 };
    }
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(this.crc >>> 0);
    this.crc = 0;
    return { crc32: bytes.toString('base64') };
  }

  private async startUpload(): Promise<string> {
    const created = await this.client.send(
      new CreateMultipartUploadCommand({ ...this.target, ...(this.withCrc32 ? { ChecksumAlgorithm: 'CRC32' as const } : {}) }),
    );
    if (!created.UploadId) throw new Error('CreateMultipartUpload returned no UploadId');
    return created.UploadId;
  }

  /** A reused buffer, else a new one: sendPart() keeps at most queueSize in flight, plus this one. */
  private freeBuffer(): Buffer {
    this.throwIfFailed();
    return this.spare.pop() ?? Buffer.allocUnsafeSlow(this.partSize);
  }

  private async settle(): Promise<void> {
    await Promise.all(this.inFlight);
    this.throwIfFailed();
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }
}
