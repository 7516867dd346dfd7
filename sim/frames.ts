// Frames in the simulator (docs/simulator.md "Frames and chains"): the frame roles a general create
// may carry, Seedance's refusal of frames mixed with reference media, the first frame a video
// starts from, and the exact last frame of a video, as a PNG (ffmpeg).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';

/** Roles an `image_url` content item may have; a video or audio item only its reference role. */
export const IMAGE_ROLES: readonly string[] = ['reference_image', 'first_frame', 'last_frame'];

/**
 * Seedance's 400 for first/last frames beside reference_* media (ModelArk, "InvalidParameter"), given
 * before any task exists, so nothing is billed. Words as the provider gives them.
 */
export const SEEDANCE_MIX_REFUSAL =
  'The parameter `content` specified in the request is not valid: first/last frame content cannot be mixed with reference media content.';

/** Whether a model is Seedance, whose content list the refusal applies to. */
export const isSeedance = (model: string): boolean => /seedance/i.test(model);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether a content list has a frame (first_frame/last_frame) and reference media (reference_*) together. */
export function mixesFramesAndReferences(content: readonly unknown[]): boolean {
  const roles = content.map((item) => (isObject(item) && typeof item['role'] === 'string' ? item['role'] : ''));
  return roles.some((r) => r === 'first_frame' || r === 'last_frame') && roles.some((r) => r.startsWith('reference_'));
}

/** A first frame larger than this is not drawn (the create is still taken). */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** The first frame a general create sends as a `data:` URL (`role: first_frame`), decoded; undefined when none. */
export function firstFrameOf(metadata: Record<string, unknown> | undefined): Buffer | undefined {
  const content = metadata?.['content'];
  if (!Array.isArray(content)) return undefined;
  const item = content.find((c) => isObject(c) && c['role'] === 'first_frame' && c['type'] === 'image_url');
  const url = isObject(item) && isObject(item['image_url']) ? item['image_url']['url'] : undefined;
  if (typeof url !== 'string') return undefined;
  const m = /^data:image\/[A-Za-z0-9.+-]+;base64,/.exec(url);
  if (!m || (url.length - m[0].length) * 0.75 > MAX_FRAME_BYTES) return undefined;
  const bytes = Buffer.from(url.slice(m[0].length), 'base64');
  return bytes.length > 0 ? bytes : undefined;
}

export function frameDigest(frame: Buffer): string {
  return createHash('sha256').update(frame).digest('hex').slice(0, 16);
}

/** Whether a create asked for its last frame back (`metadata.return_last_frame: true`). */
export const asksLastFrame = (metadata: Record<string, unknown> | undefined): boolean => metadata?.['return_last_frame'] === true;

/**
 * The filter graph that draws input 1 (the first frame, scaled to the video's size) over input 0 for
 * the video's first second.
 */
export function firstFrameOverlay(size: string): string {
  const [w, h] = size.split('x');
  return `[1:v]scale=${w}:${h},format=yuv420p[f];[0:v][f]overlay=0:0:enable='lt(t,1)':shortest=0`;
}

/**
 * The video's exact last frame as a PNG: every frame of its last second is decoded and written over
 * the same file, so what stays is the last one decoded. A provider encodes the frame it hands back
 * its own way; so does the simulator (a tEXt chunk after the header), so a test can tell the frame a
 * gateway returned from the same picture made again out of the stored video.
 */
export async function lastFramePng(ffmpeg: string, dir: string, mp4: Buffer): Promise<Buffer> {
  const base = join(dir, `last-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`);
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(`${base}.mp4`, mp4);
  try {
    const args = [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-sseof',
      '-1',
      '-i',
      `${base}.mp4`,
      '-update',
      '1',
      '-f',
      'image2',
      `${base}.png`,
    ];
    await new Promise<void>((resolve, reject) => execFile(ffmpeg, args, { timeout: 60_000 }, (err) => (err ? reject(err) : resolve())));
    return withSoftwareText(await fs.readFile(`${base}.png`));
  } finally {
    await fs.rm(`${base}.mp4`, { force: true });
    await fs.rm(`${base}.png`, { force: true });
  }
}

/** The PNG with a `tEXt` chunk `Software: reelflow simulator` right after its IHDR chunk (8 + 25 bytes in). */
function withSoftwareText(png: Buffer): Buffer {
  const data = Buffer.from('Software\0reelflow simulator', 'latin1');
  const typed = Buffer.concat([Buffer.from('tEXt', 'latin1'), data]);
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  typed.copy(chunk, 4);
  chunk.writeUInt32BE(crc32(typed), 8 + data.length);
  const afterHeader = 8 + 25;
  return Buffer.concat([png.subarray(0, afterHeader), chunk, png.subarray(afterHeader)]);
}
