// General task protocol (docs/protocol.md §2): JSON create body (streamed: local references are read as it is sent), task paths.
import { randomBytes } from 'node:crypto';
import { basename, extname } from 'node:path';
import type { ReferenceAsset, RenderRequest } from '../jobfile/plan';
import { describeSize } from '../jobfile/reference-limits';
import { InvalidRequestError } from './errors';
import type { PreparedBody } from './retry';
import { bodyLength, closePieces, localFilePiece, streamPieces, type BodyPiece, type FilePiece } from './streamed-body';

export const GENERAL_CREATE_PATH = '/v1/video/generations';

export function generalTaskPath(taskId: string): string {
  return `${GENERAL_CREATE_PATH}/${encodeURIComponent(taskId)}`;
}

const MIME_BY_EXT: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.bmp': 'image/bmp',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.m4a': 'audio/mp4',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
  '.aac': 'audio/aac',
};

const FALLBACK_MIME: Record<ReferenceAsset['kind'], string> = {
  image: 'image/png',
  video: 'video/mp4',
  audio: 'audio/mpeg',
};

export function mimeTypeOf(path: string, kind: ReferenceAsset['kind']): string {
  return MIME_BY_EXT[extname(path).toLowerCase()] ?? FALLBACK_MIME[kind];
}

/** `"5"` stays, `5`/`"5.0"` become `"5"`; anything else is a request error (the gateway 400s on numbers). */
export function secondsString(seconds: unknown): string | undefined {
  if (seconds === undefined || seconds === null || seconds === '') return undefined;
  const text = String(seconds).trim();
  if (/^\d+$/.test(text)) return String(Number.parseInt(text, 10));
  if (/^\d+\.0*$/.test(text)) return String(Number.parseInt(text, 10));
  throw new InvalidRequestError(`seconds must be a whole number of seconds, got "${text}"`);
}

/** The `data:` URL prefix of a local reference; its base64 follows, streamed. */
function dataUrlPrefix(asset: ReferenceAsset): string {
  return `data:${mimeTypeOf(asset.source, asset.kind)};base64,`;
}

interface ContentItem {
  type: 'image_url' | 'video_url' | 'audio_url';
  image_url?: { url: string };
  video_url?: { url: string };
  audio_url?: { url: string };
  role: string;
}

function contentItem(asset: ReferenceAsset, url: string): ContentItem {
  const role = asset.role || `reference_${asset.kind}`;
  switch (asset.kind) {
    case 'image':
      return { type: 'image_url', image_url: { url }, role };
    case 'video':
      return { type: 'video_url', video_url: { url }, role };
    case 'audio':
      return { type: 'audio_url', audio_url: { url }, role };
  }
}

/**
 * The create body as an object, each reference's address given by `urlOf` (local files become
 * stand-ins that the caller replaces). Optional keys are omitted, never null; the prompt stays top-level.
 */
function createBodyObject(request: RenderRequest, urlOf: (asset: ReferenceAsset, index: number) => string): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, prompt: request.prompt };
  const seconds = secondsString(request.seconds);
  if (seconds !== undefined) body.seconds = seconds;
  const metadata: Record<string, unknown> = {};
  if (request.resolution !== undefined) metadata.resolution = request.resolution;
  if (request.ratio !== undefined) metadata.ratio = request.ratio;
  if (request.generateAudio !== undefined) metadata.generate_audio = request.generateAudio;
  if (request.watermark !== undefined) metadata.watermark = request.watermark;
  // The protocol's seed, when the item has takes or a seed (docs/takes.md): reproducible takes.
  if (request.seed !== undefined) metadata.seed = request.seed;
  // The provider calls it when the task changes state; new-api passes metadata on untouched (docs/callbacks.md).
  if (request.callbackUrl !== undefined) metadata.callback_url = request.callbackUrl;
  // Seedance hands back the video's last frame as content.last_frame_url (docs/chains.md).
  if (request.returnLastFrame) metadata.return_last_frame = true;
  if (request.references.length > 0) metadata.content = request.references.map((asset, i) => contentItem(asset, urlOf(asset, i)));
  if (Object.keys(metadata).length > 0) body.metadata = metadata;
  return body;
}

/**
 * The create body as pieces: JSON text, and between the texts each local reference as base64 read
 * from its file (a `data:` URL carries it inline). The JSON is made with stand-ins for the local
 * files, then cut at them; a stand-in has a random part, so no prompt can contain one.
 */
export async function generalCreatePieces(request: RenderRequest): Promise<BodyPiece[]> {
  const standIn = `reelflow-local-reference-${randomBytes(12).toString('hex')}-`;
  const files: { token: string; prefix: string; piece: FilePiece }[] = [];
  try {
    for (const [i, asset] of request.references.entries()) {
      if (!asset.local) continue;
      files.push({ token: `"${standIn}${i}"`, prefix: dataUrlPrefix(asset), piece: await localFilePiece(asset, 'base64') });
    }
  } catch (error) {
    closePieces(files.map((f) => f.piece));
    throw error;
  }
  let rest = JSON.stringify(createBodyObject(request, (asset, i) => (asset.local ? `${standIn}${i}` : asset.source)));
  const pieces: BodyPiece[] = [];
  for (const { token, prefix, piece } of files) {
    const at = rest.indexOf(token);
    pieces.push(Buffer.from(`${rest.slice(0, at)}"${prefix}`, 'utf8'), piece);
    rest = `"${rest.slice(at + token.length)}`;
  }
  pieces.push(Buffer.from(rest, 'utf8'));
  return pieces;
}

/** One attempt's create body: streamed, with its Content-Length. Called again for every attempt and failover. */
export async function prepareGeneralCreateBody(request: RenderRequest): Promise<PreparedBody> {
  const pieces = await generalCreatePieces(request);
  const body = streamPieces(pieces);
  return {
    body,
    headers: { 'content-type': 'application/json', 'content-length': String(bodyLength(pieces)) },
    // The files a stream never reached are closed too (a generator's return runs no finally it has not entered).
    dispose: () => {
      void body.return(undefined).catch(() => undefined);
      closePieces(pieces);
    },
  };
}

/** The whole create body as text: for small bodies and tests only (the client streams it). */
export async function buildGeneralCreateBody(request: RenderRequest): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of streamPieces(await generalCreatePieces(request))) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** How much of a reference's base64 `--dry-run` shows: 48 characters, 36 bytes. */
const SHOWN_CHARS = 48;

/** A `data:` URL as `--dry-run` shows it: whole when short, else its start, then what was left out. */
function shortened(prefix: string, base64: string, rest: string): string {
  return rest ? `${prefix}${base64}… (${rest})` : `${prefix}${base64}`;
}

/** The first bytes of a local reference, for display, read from the piece's own descriptor (which it closes). */
async function firstBytes(piece: FilePiece, count: number): Promise<Buffer> {
  const head = Buffer.alloc(count);
  try {
    const { bytesRead } = await piece.file.handle.read(head, 0, count, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await piece.file.close();
  }
}

/**
 * The create body as `run --dry-run` shows it, without reading whole files: a local reference's
 * `data:` URL is its first 48 base64 characters, then the file's name and size; a long `data:` URL
 * from the job file is cut the same way.
 */
export async function describeGeneralCreateBody(request: RenderRequest): Promise<Record<string, unknown>> {
  const shown = new Map<number, string>();
  for (const [i, asset] of request.references.entries()) {
    if (asset.local) {
      const piece = await localFilePiece(asset, 'base64');
      const head = await firstBytes(piece, (SHOWN_CHARS / 4) * 3);
      const rest = piece.size > head.length ? `${basename(asset.source)}: ${describeSize(piece.size)}` : '';
      shown.set(i, shortened(dataUrlPrefix(asset), head.toString('base64'), rest));
    } else if (asset.source.startsWith('data:')) {
      const comma = asset.source.indexOf(',') + 1;
      const payload = asset.source.slice(comma);
      const rest = payload.length > SHOWN_CHARS ? `${payload.length.toLocaleString('en-US')} characters in all` : '';
      shown.set(i, shortened(asset.source.slice(0, comma), payload.slice(0, SHOWN_CHARS), rest));
    }
  }
  return createBodyObject(request, (asset, i) => shown.get(i) ?? asset.source);
}
