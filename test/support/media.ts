// Checks that a file is a real, playable MP4: ffprobe when present, else the ISO-BMFF header.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

function hasFfprobe(): boolean {
  try {
    execFileSync('ffprobe', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Duration in seconds of a valid MP4 (ffprobe), or throws. Without ffprobe, checks the `ftyp` box. */
export function probeMp4(path: string): { duration?: number; codec?: string } {
  if (!hasFfprobe()) {
    const head = readFileSync(path).subarray(0, 12);
    if (head.subarray(4, 8).toString('latin1') !== 'ftyp') throw new Error(`${path} is not an MP4 (no ftyp box)`);
    return {};
  }
  const json = execFileSync('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path], {
    encoding: 'utf8',
  });
  const info = JSON.parse(json) as {
    format?: { duration?: string; format_name?: string };
    streams?: Array<{ codec_type?: string; codec_name?: string }>;
  };
  if (!info.format?.format_name?.includes('mp4')) throw new Error(`${path}: ffprobe says ${info.format?.format_name}`);
  const video = info.streams?.find((s) => s.codec_type === 'video');
  if (!video) throw new Error(`${path} has no video stream`);
  return { duration: Number(info.format.duration), codec: video.codec_name };
}

/** The first stream's frame size and the container's duration, as ffprobe reads them (ffprobe required). */
export function probeVideoSize(path: string): { width: number; height: number; seconds: number } {
  const out = execFileSync(
    '/usr/bin/ffprobe',
    ['-v', 'error', '-show_entries', 'format=duration:stream=width,height', '-of', 'json', path],
    {
      encoding: 'utf8',
    },
  );
  const info = JSON.parse(out) as { format: { duration: string }; streams: Array<{ width: number; height: number }> };
  return { width: info.streams[0]?.width ?? 0, height: info.streams[0]?.height ?? 0, seconds: Number(info.format.duration) };
}

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}
