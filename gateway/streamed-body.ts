// Request bodies made of text and local files, sent as streams whose length is known before the
// first byte. A reference file is never held whole in memory: it is read in chunks and, for the
// general protocol's inline `data:` URLs, base64-encoded chunk by chunk (a 300 MB reference once took
// 1.2 GB of worker memory as one string, and a 420 MB one could not be made into a string at all).
// A body is a list of pieces, made again for every attempt (each opens its files once: a piece
// streams from the descriptor its attempt opened, never from the path again).
import { createHash } from 'node:crypto';
import type { ReferenceAsset } from '../jobfile/plan';
import { describeSize, MAX_REFERENCE_BYTES, referenceSizeProblem } from '../jobfile/reference-limits';
import { GatewayError, InvalidRequestError } from './errors';
import { digestMismatch, openReferencePath, openVerifiedReference, type OpenedReference } from './reference-file';

/** A local file within a body: `raw` bytes (a multipart upload) or `base64` text (a `data:` URL). */
export interface FilePiece {
  path: string;
  /** Its size when the body was prepared; the body's length is computed from it. */
  size: number;
  encoding: 'raw' | 'base64';
  /** The file, opened once when the body was prepared: its bytes are read from here, never from the path again. */
  file: OpenedReference;
}

export type BodyPiece = Buffer | FilePiece;

/**
 * Bytes per read: a multiple of 3, so base64 chunks join without padding in between. Small enough
 * that each chunk's base64 text stays in V8's young generation, which is collected at once: with
 * 768 KiB reads (1 MiB strings, kept in the large-object space until a full collection) sending a
 * 300 MiB reference grew RSS by about 80 MiB; with these, by about 10. Reads can come back shorter;
 * the encoder carries the odd bytes over.
 */
const READ_BYTES = 3 * 32 * 1024;

/** What a file piece becomes on the wire. */
export function encodedLength(piece: Pick<FilePiece, 'size' | 'encoding'>): number {
  return piece.encoding === 'base64' ? 4 * Math.ceil(piece.size / 3) : piece.size;
}

export function bodyLength(pieces: readonly BodyPiece[]): number {
  return pieces.reduce((n, piece) => n + (Buffer.isBuffer(piece) ? piece.length : encodedLength(piece)), 0);
}

/** Closes the files of a body's pieces (a body that was never sent, or sent in part). */
export function closePieces(pieces: readonly BodyPiece[]): void {
  for (const piece of pieces) if (!Buffer.isBuffer(piece)) void piece.file.close();
}

/**
 * A local reference as a piece: opened here, once per attempt, and read from that descriptor only.
 * A reference the plan checked (`asset.checked`) is opened without following links and must have
 * the plan's sha256 (gateway/reference-file.ts); its size is checked against the limit a gateway can
 * take (jobfile/reference-limits.ts), so a file that grew since it was validated is refused here,
 * before anything is sent.
 */
export async function localFilePiece(
  asset: Pick<ReferenceAsset, 'source' | 'checked'>,
  encoding: FilePiece['encoding'],
): Promise<FilePiece> {
  let file: OpenedReference;
  try {
    file = asset.checked ? await openVerifiedReference(asset.checked) : await openReferencePath(asset.source);
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw new InvalidRequestError(`reference file ${asset.source} cannot be read: ${(error as Error).message}`);
  }
  const problem = referenceSizeProblem(`reference file ${asset.source}`, file.size);
  if (problem) {
    await file.close();
    throw new InvalidRequestError(problem);
  }
  return { path: asset.source, size: file.size, encoding, file };
}

function changed(piece: FilePiece, read: number): InvalidRequestError {
  return new InvalidRequestError(
    `reference file ${piece.path} changed while it was being sent (${piece.size} bytes when the request began, ` +
      `${read} read${read > piece.size ? ' so far' : ''}); the request was cut off before its end, so nothing was created`,
  );
}

/**
 * The file's bytes, exactly `piece.size` of them, from its descriptor, or an error saying what went
 * wrong. With the plan's sha256 the last chunk is held back until the whole file has been hashed: a
 * file written in place while it is sent cuts the body off before its end, so the gateway never has
 * a whole request with other bytes than the checked ones.
 */
async function* rawChunks(piece: FilePiece): AsyncGenerator<Buffer> {
  const { file } = piece;
  const hash = file.sha256 ? createHash('sha256') : undefined;
  let read = 0;
  let held: Buffer | undefined;
  try {
    for (;;) {
      const chunk = Buffer.alloc(READ_BYTES);
      let bytesRead: number;
      try {
        ({ bytesRead } = await file.handle.read(chunk, 0, READ_BYTES, read));
      } catch (error) {
        throw new InvalidRequestError(`reference file ${piece.path} cannot be read: ${(error as Error).message}`);
      }
      if (bytesRead === 0) break;
      read += bytesRead;
      if (read > piece.size) throw changed(piece, read);
      const bytes = chunk.subarray(0, bytesRead);
      hash?.update(bytes);
      if (held) yield held;
      held = bytes;
    }
    if (read !== piece.size) throw changed(piece, read);
    if (hash) {
      const actual = hash.digest('hex');
      if (actual !== file.sha256) throw digestMismatch(file, actual);
    }
    if (held) yield held;
  } finally {
    await file.close();
  }
}

/**
 * Base64 of a byte stream, chunk by chunk: whole 3-byte groups are encoded, the 0-2 bytes left over
 * wait for the next chunk, so the text is exactly the base64 of the whole, padded only at its end.
 */
export async function* base64Chunks(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let carry: Buffer | undefined;
  for await (const chunk of source) {
    const data = carry ? Buffer.concat([carry, chunk]) : chunk;
    const whole = data.length - (data.length % 3);
    carry = whole < data.length ? data.subarray(whole) : undefined;
    if (whole > 0) yield Buffer.from(data.toString('base64', 0, whole), 'latin1');
  }
  if (carry) yield Buffer.from(carry.toString('base64'), 'latin1');
}

/** The file's bytes as the piece says; usable for any file source (a multipart part, a data: URL). */
export function fileChunks(piece: FilePiece): AsyncGenerator<Buffer> {
  return piece.encoding === 'base64' ? base64Chunks(rawChunks(piece)) : rawChunks(piece);
}

/** The body's bytes in order. Each file is opened only when reached and closed however the iteration ends. */
export async function* streamPieces(pieces: readonly BodyPiece[]): AsyncGenerator<Buffer> {
  for (const piece of pieces) {
    if (Buffer.isBuffer(piece)) yield piece;
    else yield* fileChunks(piece);
  }
}

/**
 * A stream cut off past the reference limit, for sources whose size is not known up front (a remote
 * reference without a length): a host's bytes are not trusted to end.
 */
export async function* boundedChunks(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  what: string,
  limit = MAX_REFERENCE_BYTES,
): AsyncGenerator<Uint8Array> {
  let read = 0;
  for await (const chunk of source) {
    read += chunk.length;
    if (read > limit) throw new InvalidRequestError(`${what} sent more than ${describeSize(limit)}, the most a reference may have`);
    yield chunk;
  }
}
