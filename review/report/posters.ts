// Poster frames and durations from ffmpeg/ffprobe, when they are installed. Both are optional:
// without them the report still renders, with placeholders and no durations.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, lstat, rm, stat } from 'node:fs/promises';
import { delimiter, join, resolve } from 'node:path';
import { mapLimit } from '../../storage/map-limit';
import { objectNameProblem } from '../../storage/names';
import { openUnder, renameUnder } from '../../storage/safe-path';
import { localVideoInput, type VideoInput } from './video-input';

export interface MediaTools {
  ffmpeg?: string;
  ffprobe?: string;
}

/** What the report knows about one stored video. */
export interface VideoMedia {
  /** False when the file named by the manifest is not in the output directory. */
  exists: boolean;
  /** Poster path relative to the output directory (`posters/<file>.jpg`), when one is available. */
  poster?: string;
  durationSec?: number;
  /** The video's frame size, as ffprobe reads it (the tile's aspect ratio when the row does not say). */
  width?: number;
  height?: number;
}

/** Extractions run at most this many at a time: ffmpeg is CPU-heavy and machines are small. */
export const POSTER_CONCURRENCY = 2;
const POSTER_WIDTH = 480;
const POSTER_AT_SECONDS = 0.5;
const TOOL_TIMEOUT_MS = 60_000;

/** Absolute path of an executable on PATH, or undefined. */
export async function findExecutable(name: string, pathEnv = process.env.PATH ?? ''): Promise<string | undefined> {
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/**
 * The tools to use: explicit overrides win (null means "pretend it is absent"), otherwise PATH.
 */
export async function findMediaTools(overrides: { ffmpeg?: string | null; ffprobe?: string | null } = {}): Promise<MediaTools> {
  const pick = async (name: 'ffmpeg' | 'ffprobe'): Promise<string | undefined> => {
    const given = overrides[name];
    if (given === null) return undefined;
    return given ?? (await findExecutable(name));
  };
  const tools: MediaTools = {};
  const ffmpeg = await pick('ffmpeg');
  const ffprobe = await pick('ffprobe');
  if (ffmpeg) tools.ffmpeg = ffmpeg;
  if (ffprobe) tools.ffprobe = ffprobe;
  return tools;
}

function run(file: string, args: string[]): Promise<{ ok: boolean; stdout: Buffer }> {
  return new Promise((done) => {
    execFile(file, args, { timeout: TOOL_TIMEOUT_MS, maxBuffer: 4 << 20, windowsHide: true, encoding: 'buffer' }, (error, stdout) => {
      done({ ok: !error, stdout });
    });
  });
}

/** `name` under `root` when it is an object name (storage/names.ts: inside the location, no control characters); else undefined. */
export function insideDir(root: string, name: string): string | undefined {
  return objectNameProblem(name) === undefined ? resolve(root, ...name.split('/')) : undefined;
}

/** A regular file with bytes in it, not reached through a link in its last component. */
async function nonEmptyFile(path: string): Promise<{ mtimeMs: number } | undefined> {
  try {
    const info = await lstat(path);
    return info.isFile() && info.size > 0 ? { mtimeMs: info.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}

/** Duration and frame size of a video, in one ffprobe call; each left out when it cannot be read. */
export async function probeVideo(ffprobe: string, video: VideoInput): Promise<Pick<VideoMedia, 'durationSec' | 'width' | 'height'>> {
  const { ok, stdout } = await run(ffprobe, [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'format=duration:stream=width,height',
    '-of',
    'json',
    ...video,
  ]);
  const found: Pick<VideoMedia, 'durationSec' | 'width' | 'height'> = {};
  if (!ok) return found;
  let info: { format?: { duration?: string }; streams?: Array<{ width?: unknown; height?: unknown }> };
  try {
    info = JSON.parse(stdout.toString('utf8')) as typeof info;
  } catch {
    return found;
  }
  const seconds = Number.parseFloat(info.format?.duration ?? '');
  if (Number.isFinite(seconds) && seconds > 0) found.durationSec = seconds;
  const { width, height } = info.streams?.[0] ?? {};
  if (typeof width === 'number' && typeof height === 'number' && width > 0 && height > 0) {
    found.width = width;
    found.height = height;
  }
  return found;
}

/**
 * Writes one JPEG frame of `video` to `poster` (relative to `outputDir`). Takes the frame at 0.5 s,
 * or the first frame when the video is shorter than that. ffmpeg hands the frame over on its
 * standard output and reelflow writes the file itself, the way it writes every file (new temporary
 * file, never through a link, then a rename: docs/files.md).
 */
export async function extractPoster(ffmpeg: string, video: VideoInput, outputDir: string, poster: string): Promise<boolean> {
  const frame = async (seek: number | undefined): Promise<Buffer | undefined> => {
    const args = ['-hide_banner', '-loglevel', 'error', '-nostdin'];
    if (seek !== undefined) args.push('-ss', String(seek));
    args.push(...video, '-frames:v', '1', '-vf', `scale=${POSTER_WIDTH}:-2`, '-q:v', '4', '-f', 'image2pipe', '-c:v', 'mjpeg', 'pipe:1');
    const { ok, stdout } = await run(ffmpeg, args);
    return ok && stdout.length > 0 ? stdout : undefined;
  };
  const jpeg = (await frame(POSTER_AT_SECONDS)) ?? (await frame(undefined));
  if (!jpeg) return false;
  const temp = `${poster}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fh = await openUnder(outputDir, temp, 'create');
    try {
      await fh.writeFile(jpeg);
    } finally {
      await fh.close();
    }
    await renameUnder(outputDir, temp, poster);
    return true;
  } finally {
    await rm(resolve(outputDir, temp), { force: true });
  }
}

/** Poster name for a stored object: `posters/<file>.jpg`, relative to the output directory. */
export function posterName(file: string): string {
  return `posters/${file.replace(/\\/g, '/')}.jpg`;
}

export async function inspectVideo(outputDir: string, file: string, tools: MediaTools, probe = true): Promise<VideoMedia> {
  const path = insideDir(outputDir, file);
  const videoInfo = path ? await nonEmptyFile(path) : undefined;
  if (!path || !videoInfo) return { exists: false };
  const media: VideoMedia = { exists: true };
  // A file that is no video gets a placeholder: neither tool ever reads it.
  const video = await localVideoInput(path);
  if (!video) return media;
  const name = posterName(file);
  const poster = insideDir(outputDir, name);
  if (poster) {
    const existing = await nonEmptyFile(poster);
    // Reuse a poster made after the video was last written; otherwise (re)extract when we can.
    if (existing && existing.mtimeMs >= videoInfo.mtimeMs) media.poster = name;
    else if (tools.ffmpeg && (await extractPoster(tools.ffmpeg, video, outputDir, name))) media.poster = name;
  }
  if (tools.ffprobe && probe) Object.assign(media, await probeVideo(tools.ffprobe, video));
  return media;
}

/**
 * Inspects every named video (poster, and with `probe`, duration and size), at most
 * POSTER_CONCURRENCY at a time. `probe` leaves out ffprobe for videos whose rows say their ratio and
 * resolution: a page of hundreds of takes is then made in the time of its posters.
 */
export async function inspectVideos(
  outputDir: string,
  files: readonly string[],
  tools: MediaTools,
  probe: (file: string) => boolean = () => true,
): Promise<Map<string, VideoMedia>> {
  const unique = [...new Set(files)];
  const media = await mapLimit(unique, POSTER_CONCURRENCY, (file) => inspectVideo(outputDir, file, tools, probe(file)));
  return new Map(unique.map((file, i) => [file, media[i] as VideoMedia]));
}
