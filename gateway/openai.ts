// Alternative video protocol (docs/protocol.md §3): multipart create streaming the first reference image as
// `input_reference`, video object paths.
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import type { ReferenceAsset, RenderRequest } from '../jobfile/plan';
import { describeSize, MAX_REFERENCE_BYTES } from '../jobfile/reference-limits';
import { InvalidRequestError } from './errors';
import { mimeTypeOf, secondsString } from './general';
import { sourceOf } from './http';
import { boundedChunks, closePieces, fileChunks, localFilePiece } from './streamed-body';

export const OPENAI_CREATE_PATH = '/v1/videos';

export function openaiTaskPath(taskId: string): string {
  return `${OPENAI_CREATE_PATH}/${encodeURIComponent(taskId)}`;
}

export function openaiContentPath(taskId: string): string {
  return `${openaiTaskPath(taskId)}/content`;
}

/** Bytes of the reference image, opened fresh for every attempt. */
export interface ReferenceSource {
  stream: AsyncIterable<Uint8Array> | Iterable<Uint8Array> | Readable;
  length?: number;
  filename: string;
  contentType: string;
  dispose(): void;
}

/** Opens a remote reference (the client supplies this, so the fetch uses its agent and no key). */
export type RemoteOpener = (url: URL) => Promise<ReferenceSource>;

export interface MultipartBody {
  body: AsyncIterable<Uint8Array>;
  headers: Record<string, string>;
  dispose(): void;
}

function escapeName(name: string): string {
  return name.replace(/["\r\n\\]/g, '_');
}

/**
 * A local reference image, opened once for this attempt and read from that descriptor as the body is
 * sent (never whole), its size (and the plan's sha256, when checked) verified for every attempt.
 */
async function openLocal(asset: ReferenceAsset): Promise<ReferenceSource> {
  const piece = await localFilePiece(asset, 'raw');
  const stream = fileChunks(piece);
  return {
    stream,
    length: piece.size,
    filename: basename(asset.source),
    contentType: mimeTypeOf(asset.source, asset.kind),
    dispose: () => {
      void stream.return(undefined).catch(() => undefined);
      closePieces([piece]);
    },
  };
}

function openDataUrl(source: string): ReferenceSource {
  const match = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(source);
  if (!match) throw new InvalidRequestError('reference image data: URL is malformed');
  const contentType = match[1] || 'application/octet-stream';
  const payload = match[3] ?? '';
  const bytes = match[2] ? Buffer.from(payload, 'base64') : Buffer.from(decodeURIComponent(payload), 'utf8');
  const ext = contentType.split('/')[1]?.replace('jpeg', 'jpg') ?? 'bin';
  return { stream: [bytes], length: bytes.length, filename: `reference.${ext}`, contentType, dispose: () => undefined };
}

/** A reference as messages name it: the path, or the address without credentials and query. */
function referenceName(asset: ReferenceAsset): string {
  if (asset.local) return asset.source;
  if (asset.source.startsWith('data:')) return 'a data: URL';
  try {
    return sourceOf(new URL(asset.source));
  } catch {
    return 'a reference';
  }
}

export async function openReference(asset: ReferenceAsset, openRemote: RemoteOpener): Promise<ReferenceSource> {
  if (asset.local) return openLocal(asset);
  if (asset.source.startsWith('data:')) return openDataUrl(asset.source);
  let url: URL;
  try {
    url = new URL(asset.source);
  } catch {
    throw new InvalidRequestError(`reference ${asset.source} is neither a local file nor a URL`);
  }
  return openRemote(url);
}

/** The create form's text fields, in order; the dry run shows these very values (cli/commands/dry-run.ts). */
export function openaiCreateFields(request: RenderRequest): [string, string][] {
  const fields: [string, string][] = [
    ['model', request.model],
    ['prompt', request.prompt],
  ];
  const seconds = secondsString(request.seconds);
  if (seconds !== undefined) fields.push(['seconds', seconds]);
  if (request.size !== undefined) fields.push(['size', request.size]);
  // Not a field of the protocol's own: the gateway passes extra fields on as metadata (docs/takes.md).
  if (request.seed !== undefined) fields.push(['seed', String(request.seed)]);
  return fields;
}

/**
 * The multipart create body as a stream: text fields first, then the image part piped from its
 * source. Content-Length is set when every part's size is known.
 */
export async function buildOpenaiCreateBody(request: RenderRequest, openRemote: RemoteOpener): Promise<MultipartBody> {
  const fields = openaiCreateFields(request);
  // The protocol carries one image: a first frame when the item has one (docs/chains.md), else the first image.
  const image = request.references.find((r) => r.role === 'first_frame') ?? request.references.find((r) => r.kind === 'image');
  const reference = image ? await openReference(image, openRemote) : undefined;
  const what = image ? `reference image ${referenceName(image)}` : '';
  if (reference?.length !== undefined && reference.length > MAX_REFERENCE_BYTES) {
    reference.dispose();
    throw new InvalidRequestError(
      `${what} is ${describeSize(reference.length)}, over the ${describeSize(MAX_REFERENCE_BYTES)} a reference may have`,
    );
  }

  const boundary = `----reelflow${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = fields.map(([name, value]) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(name)}"\r\n\r\n${value}\r\n`, 'utf8'),
  );
  const fileHead = reference
    ? Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="input_reference"; ` +
          `filename="${escapeName(reference.filename)}"\r\nContent-Type: ${reference.contentType}\r\n\r\n`,
        'utf8',
      )
    : undefined;
  const fileTail = reference ? Buffer.from('\r\n', 'utf8') : undefined;
  const closing = Buffer.from(`--${boundary}--\r\n`, 'utf8');

  const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}` };
  const known = !reference || reference.length !== undefined;
  if (known) {
    const total =
      parts.reduce((n, p) => n + p.length, 0) +
      (fileHead?.length ?? 0) +
      (reference?.length ?? 0) +
      (fileTail?.length ?? 0) +
      closing.length;
    headers['content-length'] = String(total);
  }

  async function* generate(): AsyncGenerator<Uint8Array> {
    for (const part of parts) yield part;
    if (reference && fileHead && fileTail) {
      yield fileHead;
      // A remote reference's length may be unknown (chunked): its bytes are cut off past the limit.
      for await (const chunk of boundedChunks(reference.stream, what)) yield chunk;
      yield fileTail;
    }
    yield closing;
  }
  return { body: generate(), headers, dispose: () => reference?.dispose() };
}
