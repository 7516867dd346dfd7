// Real MP4s with the requested duration and size, generated once per (seconds, size) by ffmpeg and
// cached on disk, then padded to the configured byte size with an MP4 `free` box. The padding is
// produced while streaming (views of one shared zero buffer), so a 1 GiB video costs no memory.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SAMPLE_MP4 = join(__dirname, 'assets', 'sample-5s-640x360.mp4');

/** A video as served: the real file, then an optional `free` box header, then zeros. */
export interface VideoBody {
  mp4: Buffer;
  padHeader: Buffer | null;
  total: number;
  etag: string;
}

/**
 * The header of a `free` box that makes the file exactly `total` bytes long. A box needs at least
 * 8 bytes, so gaps of 1..7 bytes cannot be padded (null). Boxes over 4 GiB use the 64-bit size form.
 */
export function freeBoxHeader(boxBytes: number): Buffer | null {
  if (boxBytes < 8) return null;
  if (boxBytes <= 0xffffffff) {
    const h = Buffer.alloc(8);
    h.writeUInt32BE(boxBytes, 0);
    h.write('free', 4, 'latin1');
    return h;
  }
  const h = Buffer.alloc(16);
  h.writeUInt32BE(1, 0);
  h.write('free', 4, 'latin1');
  h.writeBigUInt64BE(BigInt(boxBytes), 8);
  return h;
}

export function padVideo(mp4: Buffer, videoBytes: number | undefined): VideoBody {
  const padHeader = videoBytes === undefined ? null : freeBoxHeader(videoBytes - mp4.length);
  const total = padHeader ? (videoBytes as number) : mp4.length;
  const etag = `"${createHash('sha1').update(mp4).digest('hex').slice(0, 20)}-${total.toString(16)}"`;
  return { mp4, padHeader, total, etag };
}

/** Even dimensions, as H.264 with yuv420p requires. */
export function normaliseSize(size: string | undefined, fallback = '1280x720'): string {
  const m = /^(\d{2,5})x(\d{2,5})$/.exec(size ?? '');
  if (!m) return fallback;
  const even = (n: number): number => Math.max(16, Math.min(3840, n - (n % 2)));
  return `${even(Number(m[1]))}x${even(Number(m[2]))}`;
}

/** The general protocol gives "720p" and "16:9"; the short side is the resolution. */
export function sizeFromResolution(resolution: unknown, ratio: unknown): string {
  const r = typeof resolution === 'string' ? /^(\d{3,4})p$/i.exec(resolution) : null;
  const short = r ? Number(r[1]) : 720;
  const q = typeof ratio === 'string' ? /^(\d{1,2}):(\d{1,2})$/.exec(ratio) : null;
  const w = q ? Number(q[1]) : 16;
  const h = q ? Number(q[2]) : 9;
  if (w === 0 || h === 0) return normaliseSize(undefined);
  const [W, H] = w >= h ? [Math.round((short * w) / h), short] : [short, Math.round((short * h) / w)];
  return normaliseSize(`${W}x${H}`);
}

function findFfmpeg(explicit: string | null | undefined): string | null {
  if (explicit === null) return null;
  if (explicit) return explicit;
  if (existsSync('/usr/bin/ffmpeg')) return '/usr/bin/ffmpeg';
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'ffmpeg'))) return join(dir, 'ffmpeg');
  }
  return null;
}

export class VideoLibrary {
  private readonly files = new Map<string, Promise<Buffer>>();
  private readonly bodies = new Map<string, Promise<VideoBody>>();
  private readonly ffmpeg: string | null;
  private readonly cacheDir: string;
  // One ffmpeg at a time: the machine has two cores and the simulator must stay responsive.
  private queue: Promise<unknown> = Promise.resolve();
  private sample: Buffer | undefined;
  private readonly videoBytes: number | undefined;

  constructor(opts: { cacheDir?: string; ffmpegPath?: string | null; videoBytes?: number }) {
    this.ffmpeg = findFfmpeg(opts.ffmpegPath);
    this.cacheDir = opts.cacheDir ?? join(tmpdir(), 'reelflow-sim-cache');
    this.videoBytes = opts.videoBytes;
  }

  get usingFfmpeg(): boolean {
    return this.ffmpeg !== null;
  }

  /** Starts generation early (at create time) so downloads rarely wait. */
  prepare(seconds: number, size: string): void {
    this.body(seconds, size).catch(() => undefined);
  }

  body(seconds: number, size: string): Promise<VideoBody> {
    const key = `${seconds}s-${size}`;
    let b = this.bodies.get(key);
    if (!b) {
      b = this.file(seconds, size).then((mp4) => padVideo(mp4, this.videoBytes));
      this.bodies.set(key, b);
    }
    return b;
  }

  private file(seconds: number, size: string): Promise<Buffer> {
    const key = `${seconds}s-${size}`;
    let f = this.files.get(key);
    if (!f) {
      f = this.generate(seconds, size).catch(() => this.sampleMp4());
      this.files.set(key, f);
    }
    return f;
  }

  private sampleMp4(): Buffer {
    this.sample ??= readFileSync(SAMPLE_MP4);
    return this.sample;
  }

  private async generate(seconds: number, size: string): Promise<Buffer> {
    const ffmpeg = this.ffmpeg;
    if (!ffmpeg) return this.sampleMp4();
    const path = join(this.cacheDir, `smpte-${seconds}s-${size}.mp4`);
    try {
      return await fs.readFile(path);
    } catch {
      // not cached yet
    }
    await fs.mkdir(this.cacheDir, { recursive: true });
    // Unique temp name, then rename: several simulators (parallel test files) may share the cache.
    const tmp = `${path}.${process.pid}.${Date.now()}.tmp.mp4`;
    const run = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const args = [
          '-hide_banner',
          '-loglevel',
          'error',
          '-y',
          '-f',
          'lavfi',
          '-i',
          `smptebars=size=${size}:rate=24`,
          '-t',
          String(seconds),
          '-c:v',
          'libx264',
          '-preset',
          'ultrafast',
          '-crf',
          '30',
          '-pix_fmt',
          'yuv420p',
          '-movflags',
          '+faststart',
          tmp,
        ];
        execFile(ffmpeg, args, { timeout: 120_000 }, (err) => (err ? reject(err) : resolve()));
      });
    const job = this.queue.then(run, run);
    this.queue = job.catch(() => undefined);
    await job;
    await fs.rename(tmp, path);
    return fs.readFile(path);
  }
}
