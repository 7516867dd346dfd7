// Small real clips for the assembly tests, made by ffmpeg from its test sources.
import { execFileSync } from 'node:child_process';

export interface ClipSpec {
  seconds: number;
  size?: string;
  rate?: number;
  /** A sine tone as its sound; absent: a silent clip (no audio stream). */
  tone?: number;
}

/** Writes an H.264 MP4 (AAC sound when `tone`), 640x360 at 24 fps unless told. */
export function makeClip(path: string, spec: ClipSpec): string {
  const size = spec.size ?? '640x360';
  const rate = spec.rate ?? 24;
  const inputs = ['-f', 'lavfi', '-i', `testsrc=size=${size}:rate=${rate}:duration=${spec.seconds}`];
  if (spec.tone) inputs.push('-f', 'lavfi', '-i', `sine=frequency=${spec.tone}:sample_rate=48000:duration=${spec.seconds}`);
  const sound = spec.tone ? ['-c:a', 'aac', '-ac', '2', '-ar', '48000'] : [];
  execFileSync('/usr/bin/ffmpeg', [
    '-nostdin',
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    ...inputs,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-video_track_timescale',
    '12288',
    ...sound,
    '-t',
    String(spec.seconds),
    path,
  ]);
  return path;
}

/** The sizes of a file's video packets, in order (ffprobe): equal lists mean the same coded pictures. */
export function videoPacketSizes(path: string): number[] {
  const out = execFileSync(
    '/usr/bin/ffprobe',
    ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=size', '-of', 'csv=p=0', path],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  return out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(Number);
}

/** The container's duration and its streams' kinds, as ffprobe reads them. */
export function probeFilm(path: string): { seconds: number; streams: string[]; width: number; height: number } {
  const out = execFileSync(
    '/usr/bin/ffprobe',
    ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type,width,height', '-of', 'json', path],
    { encoding: 'utf8' },
  );
  const info = JSON.parse(out) as { format: { duration: string }; streams: Array<{ codec_type: string; width?: number; height?: number }> };
  const video = info.streams.find((s) => s.codec_type === 'video');
  return {
    seconds: Number(info.format.duration),
    streams: info.streams.map((s) => s.codec_type).sort(),
    width: video?.width ?? 0,
    height: video?.height ?? 0,
  };
}
