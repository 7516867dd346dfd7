// Small text helpers for messages: nearest-name suggestions and safe value display.
import { isUtf8 } from 'node:buffer';

export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  // Three rows: two letters swapped (`modle` for `model`) is the commonest typo and counts as one edit.
  let before = new Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1);
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1);
      row[j] = d;
    }
    before = prev;
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** The candidate closest to `word`, if it is close enough to be a plausible typo. */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.max(1, Math.min(3, Math.floor(Math.max(word.length, best.length) / 3)));
  return bestDistance <= limit ? best : undefined;
}

const KEY_LIKE = /(?:sk-|\b(?:pk|rk)-)[A-Za-z0-9_-]{16,}/g;

/** True when a string looks like an API key rather than the name of a variable. */
export function looksLikeApiKey(value: string): boolean {
  const v = value.trim();
  if (/^(?:sk|pk|rk)[-_]/.test(v) || /^Bearer\s/i.test(v)) return true;
  if (v.length >= 24 && /[a-z]/.test(v) && /[0-9]/.test(v) && !/^[A-Z0-9_]+$/.test(v)) return true;
  return false;
}

/** Replaces anything key-shaped so that no message can leak a key. */
export function redact(text: string): string {
  return text.replace(KEY_LIKE, (m) => `${m.slice(0, 3)}…(redacted)`);
}

/** A value as a message shows it: strings quoted and shortened, collections by kind. */
export function show(value: unknown): string {
  if (value === undefined || value === null) return 'nothing';
  if (typeof value === 'string') {
    if (looksLikeApiKey(value)) return 'a key-like value (not shown)';
    const s = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return redact(JSON.stringify(s));
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return typeof value;
}

/** One line, no control characters, no key-like strings: safe to print anywhere. */
export function cleanMessage(text: string): string {
  // eslint-disable-next-line no-control-regex
  return redact(text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/**
 * A file that is not UTF-8 text, at its first bad byte. Decoding it anyway would put U+FFFD in
 * prompts and names (Latin-1 `café` became `caf\uFFFD`): it is refused where the byte is instead.
 */
export class NotUtf8Error extends Error {
  constructor(
    /** Byte offset of the first byte that is not part of a valid UTF-8 sequence. */
    readonly offset: number,
    readonly byte: number,
    readonly line: number,
    /** In characters, like every column in messages. */
    readonly column: number,
  ) {
    super(
      `the file is not UTF-8 text: byte 0x${byte.toString(16).toUpperCase().padStart(2, '0')} at offset ${offset} is not valid UTF-8; save the file as UTF-8`,
    );
    this.name = 'NotUtf8Error';
  }
}

/** Length of the well-formed UTF-8 sequence at `i` (Unicode table 3-7), or 0 when there is none. */
function sequenceAt(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i] as number;
  if (b0 < 0x80) return 1;
  const inRange = (k: number, lo = 0x80, hi = 0xbf): boolean => {
    const b = bytes[i + k];
    return b !== undefined && b >= lo && b <= hi;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) return inRange(1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const [lo, hi] = b0 === 0xe0 ? [0xa0, 0xbf] : b0 === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return inRange(1, lo, hi) && inRange(2) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const [lo, hi] = b0 === 0xf0 ? [0x90, 0xbf] : b0 === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return inRange(1, lo, hi) && inRange(2) && inRange(3) ? 4 : 0;
  }
  return 0;
}

/** The bytes as text, or where they stop being UTF-8. A byte order mark is kept (the parsers skip it). */
export function decodeUtf8(bytes: Uint8Array): string | NotUtf8Error {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The common case costs one native pass; the byte-by-byte walk runs only to name the bad byte.
  if (isUtf8(buffer)) return buffer.toString('utf8');
  let i = 0;
  let lineStart = 0;
  let line = 1;
  for (;;) {
    if (i >= buffer.length) return buffer.toString('utf8'); // not reached: isUtf8 said there is a bad byte
    const n = sequenceAt(buffer, i);
    if (n === 0) break;
    if (buffer[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
    i += n;
  }
  const column = [...buffer.subarray(lineStart, i).toString('utf8')].length + 1;
  return new NotUtf8Error(i, buffer[i] as number, line, column);
}
