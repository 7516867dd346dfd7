// Cuts clips, in order, into one film (docs/chains.md, "Assembly"). Clips that agree in codec, size,
// frame rate, time base and audio are joined by stream copy (the concat demuxer: no quality lost,
// seconds for any length); clips that do not, or a crossfade, need a re-encode to the first clip's
// format. Nothing appears under `out` unless ffmpeg finished: it writes a part that is renamed.
import { randomBytes } from 'node:crypto';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { probeClip, probeDurationSec, type ClipInfo } from './probe';
import { runTool } from './run';

export type AssemblyMethod = 'stream_copy' | 're_encode';

export interface AssembleOptions {
  /** Seconds of crossfade between consecutive clips, video and audio; 0 or absent: straight cuts. */
  crossfadeSec?: number;
  /** The longest ffmpeg may run. */
  timeoutMs: number;
  /** The film may not grow past this many bytes (ffmpeg's -fs). */
  maxBytes: number;
  signal?: AbortSignal;
}

export interface AssembledFilm {
  method: AssemblyMethod;
  durationSec: number;
  /** ffmpeg's arguments, for the log and for tests that ask which way the film was made. */
  args: string[];
}

/** Whether clips can be joined without decoding: the same codec, size, frame rate, time base, pixel format and audio. */
export function clipsAgree(clips: readonly ClipInfo[]): boolean {
  const [first, ...rest] = clips;
  if (!first) return false;
  const audio = (c: ClipInfo) => (c.audio ? `${c.audio.codec}/${c.audio.sampleRate}/${c.audio.channels}` : 'none');
  return rest.every(
    (c) =>
      c.codec === first.codec &&
      c.width === first.width &&
      c.height === first.height &&
      c.frameRate === first.frameRate &&
      c.timeBase === first.timeBase &&
      c.pixFmt === first.pixFmt &&
      audio(c) === audio(first),
  );
}

/** Problems with a crossfade for these clips: it must be shorter than every clip. */
export function crossfadeProblem(clips: readonly ClipInfo[], crossfadeSec: number): string | undefined {
  if (!(crossfadeSec >= 0) || !Number.isFinite(crossfadeSec)) return `crossfade ${crossfadeSec} s is not a length`;
  const shortest = Math.min(...clips.map((c) => c.durationSec));
  if (crossfadeSec > 0 && crossfadeSec >= shortest) {
    return `a crossfade of ${crossfadeSec} s is not shorter than the shortest clip (${shortest.toFixed(3)} s)`;
  }
  return undefined;
}

/** The concat demuxer's list: each path quoted, a quote in it escaped as the demuxer reads it. */
export function concatList(paths: readonly string[]): string {
  return `ffconcat version 1.0\n${paths.map((p) => `file '${p.replace(/'/g, "'\\''")}'`).join('\n')}\n`;
}

const ENCODERS: Record<string, string[]> = {
  h264: ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18'],
  hevc: ['-c:v', 'libx265', '-preset', 'veryfast', '-crf', '20', '-tag:v', 'hvc1'],
  vp9: ['-c:v', 'libvpx-vp9', '-crf', '30', '-b:v', '0'],
};

const fixed = (n: number) => n.toFixed(6);
const layout = (channels: number) => (channels === 1 ? 'mono' : 'stereo');

/**
 * The filter graph that re-encodes: every clip brought to the first clip's size (scaled to fit,
 * padded, never stretched), frame rate and pixel format, each cut at its own duration, then joined
 * by concat or by a chain of xfade/acrossfade. When any clip has sound every clip gets a track
 * (silence where it had none), so the film's sound stays in step with its pictures; when none has,
 * the film is silent.
 */
export function reencodeGraph(clips: readonly ClipInfo[], crossfadeSec: number): { graph: string; audio: boolean } {
  const first = clips[0]!;
  const { width: W, height: H } = first;
  const withSound = clips.find((c) => c.audio)?.audio;
  const parts: string[] = [];
  clips.forEach((c, i) => {
    const d = fixed(c.durationSec);
    parts.push(
      `[${i}:v:0]scale=${W}:${H}:force_original_aspect_ratio=decrease,pad=${W}:${H}:(ow-iw)/2:(oh-ih)/2,setsar=1,` +
        `fps=${first.frameRate},format=${first.pixFmt},trim=duration=${d},setpts=PTS-STARTPTS[v${i}]`,
    );
    if (!withSound) return;
    const format = `aformat=sample_fmts=fltp:sample_rates=${withSound.sampleRate}:channel_layouts=${layout(withSound.channels)}`;
    parts.push(
      c.audio
        ? `[${i}:a:0]${format},apad,atrim=duration=${d},asetpts=PTS-STARTPTS[a${i}]`
        : `anullsrc=r=${withSound.sampleRate}:cl=${layout(withSound.channels)},${format},atrim=duration=${d}[a${i}]`,
    );
  });
  if (crossfadeSec > 0 && clips.length > 1) {
    let video = 'v0';
    let sound = 'a0';
    let length = first.durationSec;
    for (let k = 1; k < clips.length; k += 1) {
      const out = k === clips.length - 1 ? 'v' : `x${k}`;
      parts.push(`[${video}][v${k}]xfade=transition=fade:duration=${fixed(crossfadeSec)}:offset=${fixed(length - crossfadeSec)}[${out}]`);
      video = out;
      if (withSound) {
        const aout = k === clips.length - 1 ? 'a' : `ax${k}`;
        parts.push(`[${sound}][a${k}]acrossfade=d=${fixed(crossfadeSec)}[${aout}]`);
        sound = aout;
      }
      length += clips[k]!.durationSec - crossfadeSec;
    }
  } else if (clips.length > 1) {
    const inputs = clips.map((_, i) => (withSound ? `[v${i}][a${i}]` : `[v${i}]`)).join('');
    parts.push(`${inputs}concat=n=${clips.length}:v=1:a=${withSound ? 1 : 0}${withSound ? '[v][a]' : '[v]'}`);
  } else {
    parts.push('[v0]null[v]');
    if (withSound) parts.push('[a0]anull[a]');
  }
  return { graph: parts.join(';'), audio: withSound !== undefined };
}

/** The encoder arguments for the first clip's format: its codec where ffmpeg has an encoder for it, else H.264. */
function encoderArgs(first: ClipInfo, audio: ClipInfo['audio'] | undefined, encoders: string): string[] {
  const wanted = ENCODERS[first.codec];
  const video = wanted && encoders.includes(` ${wanted[1]} `) ? wanted : ENCODERS.h264!;
  const [num, den] = first.timeBase.split('/');
  const timescale = num === '1' && den && /^\d+$/.test(den) ? ['-video_track_timescale', den] : [];
  const sound = audio ? ['-c:a', 'aac', '-ar', String(audio.sampleRate), '-ac', String(Math.min(audio.channels, 2))] : [];
  return [...video, '-pix_fmt', first.pixFmt, '-r', first.frameRate, ...timescale, ...sound];
}

let encoderList: Promise<string> | undefined;

function availableEncoders(): Promise<string> {
  encoderList ??= runTool('ffmpeg', ['-hide_banner', '-encoders'], { timeoutMs: 30_000 }).catch(() => '');
  return encoderList;
}

/** Cuts `clips` (paths, in order) into `out` (an MP4). Probes each clip first. */
export async function assembleClips(clips: readonly string[], out: string, options: AssembleOptions): Promise<AssembledFilm> {
  if (clips.length === 0) throw new Error('an assembly needs at least one clip');
  const infos: ClipInfo[] = [];
  for (const clip of clips) infos.push(await probeClip(clip, options.signal));
  const crossfade = options.crossfadeSec ?? 0;
  const problem = crossfadeProblem(infos, crossfade);
  if (problem) throw new Error(problem);
  const part = join(dirname(out), `.${randomBytes(6).toString('hex')}.assembling.mp4`);
  const common = ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y'];
  // ffmpeg stops at -fs and exits 0 with a film cut short: one byte over the limit tells it apart.
  const tail = ['-movflags', '+faststart', '-fs', String(options.maxBytes + 1), '-f', 'mp4', part];
  let args: string[];
  let method: AssemblyMethod;
  let list: string | undefined;
  try {
    if (crossfade === 0 && clipsAgree(infos)) {
      method = 'stream_copy';
      list = join(dirname(out), `.${randomBytes(6).toString('hex')}.concat.txt`);
      await writeFile(list, concatList(clips));
      args = [...common, '-f', 'concat', '-safe', '0', '-i', list, '-map', '0:v:0', '-map', '0:a:0?', '-c', 'copy', ...tail];
    } else {
      method = 're_encode';
      const { graph, audio } = reencodeGraph(infos, crossfade);
      const inputs = clips.flatMap((c) => ['-i', c]);
      const maps = ['-map', '[v]', ...(audio ? ['-map', '[a]'] : [])];
      const firstSound = infos.find((c) => c.audio)?.audio;
      args = [
        ...common,
        ...inputs,
        '-filter_complex',
        graph,
        ...maps,
        ...encoderArgs(infos[0]!, firstSound, await availableEncoders()),
        ...tail,
      ];
    }
    await runTool('ffmpeg', args, { timeoutMs: options.timeoutMs, signal: options.signal });
    if ((await stat(part)).size > options.maxBytes)
      throw new Error(`the film would be more than ${options.maxBytes} bytes (output.max_bytes)`);
    const durationSec = await probeDurationSec(part, options.signal);
    await rename(part, out);
    return { method, durationSec, args };
  } finally {
    await rm(part, { force: true });
    if (list) await rm(list, { force: true });
  }
}
