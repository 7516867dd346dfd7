// What a clip is, as ffprobe reads it: what decides whether clips can be cut together by stream copy.
import { runTool } from './run';

export interface ClipAudio {
  codec: string;
  sampleRate: number;
  channels: number;
}

export interface ClipInfo {
  /** The first video stream's codec name (`h264`, `hevc`, ...). */
  codec: string;
  width: number;
  height: number;
  /** The video stream's frame rate as ffprobe gives it (`24/1`, `30000/1001`). */
  frameRate: string;
  /** The video stream's time base (`1/12288`). */
  timeBase: string;
  pixFmt: string;
  /** The first audio stream; absent when the clip is silent. */
  audio?: ClipAudio;
  /** Seconds: the video stream's duration, else the container's. */
  durationSec: number;
}

const PROBE_TIMEOUT_MS = 30_000;

interface ProbeJson {
  format?: { duration?: string };
  streams?: Array<{
    codec_type?: string;
    codec_name?: string;
    width?: number;
    height?: number;
    r_frame_rate?: string;
    time_base?: string;
    pix_fmt?: string;
    sample_rate?: string;
    channels?: number;
    duration?: string;
  }>;
}

export async function probeClip(path: string, signal?: AbortSignal): Promise<ClipInfo> {
  const json = await runTool('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', '-i', path], {
    timeoutMs: PROBE_TIMEOUT_MS,
    maxStdoutBytes: 256 * 1024,
    signal,
  });
  let info: ProbeJson;
  try {
    info = JSON.parse(json) as ProbeJson;
  } catch {
    throw new Error(`ffprobe's answer about ${path} is not JSON`);
  }
  const video = info.streams?.find((s) => s.codec_type === 'video');
  if (!video?.codec_name || !video.width || !video.height || !video.r_frame_rate || !video.time_base) {
    throw new Error(`${path} has no video stream ffprobe can describe`);
  }
  const duration = Number(video.duration ?? info.format?.duration);
  if (!Number.isFinite(duration) || duration <= 0) throw new Error(`${path}: ffprobe reads no duration`);
  const audio = info.streams?.find((s) => s.codec_type === 'audio');
  return {
    codec: video.codec_name,
    width: video.width,
    height: video.height,
    frameRate: video.r_frame_rate,
    timeBase: video.time_base,
    pixFmt: video.pix_fmt ?? 'yuv420p',
    ...(audio?.codec_name
      ? { audio: { codec: audio.codec_name, sampleRate: Number(audio.sample_rate ?? 48000), channels: audio.channels ?? 2 } }
      : {}),
    durationSec: duration,
  };
}

/** The container's duration in seconds (what a player shows for the film). */
export async function probeDurationSec(path: string, signal?: AbortSignal): Promise<number> {
  const out = await runTool('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', '-i', path], {
    timeoutMs: PROBE_TIMEOUT_MS,
    maxStdoutBytes: 1024,
    signal,
  });
  const seconds = Number(out.trim());
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`${path}: ffprobe reads no duration`);
  return seconds;
}
