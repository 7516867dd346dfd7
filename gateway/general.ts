// General task protocol (§2): JSON create body, task paths.
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { ReferenceAsset, RenderRequest } from '../jobfile/plan';
import { InvalidRequestError } from './errors';

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

/** A local file as a `data:` URL (the general protocol carries only addresses). */
async function dataUrlOf(asset: ReferenceAsset): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(asset.source);
  } catch (error) {
    throw new InvalidRequestError(`reference file ${asset.source} cannot be read: ${(error as Error).message}`);
  }
  return `data:${mimeTypeOf(asset.source, asset.kind)};base64,${bytes.toString('base64')}`;
}

interface ContentItem {
  type: 'image_url' | 'video_url' | 'audio_url';
  image_url?: { url: string };
  video_url?: { url: string };
  audio_url?: { url: string };
  role: string;
}

async function contentItem(asset: ReferenceAsset): Promise<ContentItem> {
  const url = asset.local ? await dataUrlOf(asset) : asset.source;
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

/** The create body. Optional keys are omitted, never null; the prompt stays top-level. */
export async function buildGeneralCreateBody(request: RenderRequest): Promise<string> {
  const body: Record<string, unknown> = { model: request.model, prompt: request.prompt };
  const seconds = secondsString(request.seconds);
  if (seconds !== undefined) body.seconds = seconds;
  const metadata: Record<string, unknown> = {};
  if (request.resolution !== undefined) metadata.resolution = request.resolution;
  if (request.ratio !== undefined) metadata.ratio = request.ratio;
  if (request.generateAudio !== undefined) metadata.generate_audio = request.generateAudio;
  if (request.watermark !== undefined) metadata.watermark = request.watermark;
  if (request.references.length > 0) metadata.content = await Promise.all(request.references.map(contentItem));
  if (Object.keys(metadata).length > 0) body.metadata = metadata;
  return JSON.stringify(body);
}
