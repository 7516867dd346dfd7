// What a simulated video looks like (docs/simulator.md): a background whose hue comes from a hash of
// the prompt and seed, a bar sweeping across it so the clip visibly plays, and, where ffmpeg has
// drawtext, the prompt's first words, the seed and the requested size and length in the middle.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';

/** What a video is asked to show: the parts of the request that make it this request's video. */
export interface VideoRequest {
  prompt: string;
  /** The request's seed, as text; undefined when the request gave none. */
  seed?: string;
  seconds: number;
  /** WxH, even. */
  size: string;
  /** The first frame the create sent (sim/frames.ts): drawn over the video's first second. */
  firstFrame?: Buffer;
}

const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
const MAX_WORDS = 12;
const MAX_LINES = 4;
const MAX_SEED_CHARS = 40;

/** The request's seed as text: metadata.seed (general) or the `seed` form field (OpenAI), bounded. */
export function seedOf(metadata: Record<string, unknown> | undefined): string | undefined {
  const seed = metadata?.['seed'];
  if (typeof seed !== 'number' && typeof seed !== 'string') return undefined;
  const text = String(seed)
    .replace(/\p{Cc}/gu, ' ')
    .trim();
  return text === '' ? undefined : text.slice(0, MAX_SEED_CHARS);
}

/** Identifies the picture: two requests with the same prompt and seed look the same. */
export function lookHash(r: VideoRequest): string {
  // JSON keeps the two apart whatever characters they hold.
  return createHash('sha256')
    .update(JSON.stringify([r.prompt, r.seed ?? null]))
    .digest('hex');
}

/**
 * A mid-dark colour, so white text stays readable: `0xRRGGBB`. Hue, saturation and lightness each
 * come from their own bytes of the hash, so two near hues still differ in the other two.
 */
export function backgroundColour(hash: string): string {
  const byte = (i: number): number => parseInt(hash.slice(2 * i, 2 * i + 2), 16) / 255;
  const hue = parseInt(hash.slice(0, 4), 16) % 360;
  const s = 0.3 + 0.5 * byte(2);
  const l = 0.22 + 0.2 * byte(3);
  const k = (n: number): number => (n + hue / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number): number => Math.round(255 * (l - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1))));
  return `0x${[f(0), f(8), f(4)].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

/** The caption: the prompt's first words wrapped to the frame, then seed, size and seconds. */
export function caption(r: VideoRequest, charsPerLine: number): string {
  const words = r.prompt
    .replace(/\p{Cc}/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
  const shown = words.slice(0, MAX_WORDS);
  const lines: string[] = [];
  let line = '';
  for (const w of shown) {
    const word = w.length > charsPerLine ? `${w.slice(0, charsPerLine - 1)}…` : w;
    if (line && line.length + 1 + word.length > charsPerLine) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  const cut = lines.length > MAX_LINES || words.length > shown.length;
  const kept = lines.slice(0, MAX_LINES);
  if (cut && kept.length > 0) kept[kept.length - 1] = `${kept[kept.length - 1] as string} …`;
  kept.push(`${r.seed === undefined ? 'no seed' : `seed ${r.seed}`} · ${r.size} · ${r.seconds} s`);
  return kept.join('\n');
}

/**
 * The lavfi source and filters for the picture. `textFile` is a file name relative to ffmpeg's
 * working directory holding the caption (a file, so no prompt text ever needs filter escaping);
 * null draws no text (no drawtext in this ffmpeg).
 */
export function lookFilter(r: VideoRequest, hash: string, textFile: string | null): string {
  const [w = 1280, h = 720] = r.size.split('x').map(Number);
  const sweep = `drawbox=x='mod(t*iw/3\\,iw)':y=0:w=iw/24:h=ih:color=white@0.3:t=fill`;
  const parts = [`color=c=${backgroundColour(hash)}:size=${r.size}:rate=12`, sweep];
  if (textFile) {
    const fontSize = Math.max(10, Math.round(Math.min(w, h) / 16));
    const font = existsSync(FONT) ? `fontfile=${FONT}` : 'font=Sans';
    parts.push(
      `drawtext=textfile=${textFile}:expansion=none:${font}:fontsize=${fontSize}:fontcolor=white` +
        `:x=(w-text_w)/2:y=(h-text_h)/2:line_spacing=${Math.round(fontSize / 4)}` +
        `:box=1:boxcolor=black@0.45:boxborderw=${Math.round(fontSize / 2)}`,
    );
  }
  return parts.join(',');
}

/** Characters per caption line that fit the frame at lookFilter's font size. */
export function charsPerLine(size: string): number {
  const [w = 1280, h = 720] = size.split('x').map(Number);
  const fontSize = Math.max(10, Math.round(Math.min(w, h) / 16));
  return Math.max(8, Math.floor((w * 0.85) / (fontSize * 0.55)));
}

/**
 * Without ffmpeg: a `free` box appended to the shipped sample. Players skip it; it makes the file
 * this request's own (its bytes differ per prompt and seed) and says what was asked for.
 */
export function labelBox(r: VideoRequest, hash: string): Buffer {
  const text =
    `reelflow simulator: the shipped sample (no ffmpeg here); asked for ${r.size}, ${r.seconds} s, ` +
    `${r.seed === undefined ? 'no seed' : `seed ${r.seed}`}, sha256 of prompt and seed ${hash}\n`;
  const body = Buffer.from(text, 'utf8');
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length, 0);
  head.write('free', 4, 'latin1');
  return Buffer.concat([head, body]);
}
