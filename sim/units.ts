// Parsing of human durations and sizes for the CLI. sim/ shares no code with the rest of reelflow on
// purpose (it must be an independent oracle), so it carries its own small parsers.

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/i;
const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib|k|m|g)?$/i;

/** "500ms", "5s", "1.5m", "2h", "750" (ms) -> milliseconds. */
export function parseDuration(text: string): number {
  const m = DURATION.exec(text.trim());
  if (!m) throw new Error(`not a duration: ${JSON.stringify(text)} (examples: 500ms, 5s, 2m)`);
  const n = Number(m[1]);
  const unit = (m[2] ?? 'ms').toLowerCase();
  const factor = unit === 'h' ? 3_600_000 : unit === 'm' ? 60_000 : unit === 's' ? 1000 : 1;
  return Math.round(n * factor);
}

/** "5s" -> 5000; "20s..90s" -> [20000, 90000]. */
export function parseRenderTime(text: string): number | [number, number] {
  const parts = text.split('..');
  if (parts.length === 1) return parseDuration(text);
  if (parts.length !== 2) throw new Error(`not a render time: ${JSON.stringify(text)} (examples: 5s, 20s..90s)`);
  const min = parseDuration(parts[0] ?? '');
  const max = parseDuration(parts[1] ?? '');
  if (max < min) throw new Error(`render time range is reversed: ${text}`);
  return [min, max];
}

/** "1MB" -> 1048576. Binary units throughout: a padded test video of "1GB" should be exactly 1 GiB. */
export function parseSize(text: string): number {
  const m = SIZE.exec(text.trim());
  if (!m) throw new Error(`not a size: ${JSON.stringify(text)} (examples: 512KB, 1MB, 1GiB)`);
  const n = Number(m[1]);
  const unit = (m[2] ?? 'b').toLowerCase();
  const pow = unit.startsWith('g') ? 3 : unit.startsWith('m') ? 2 : unit.startsWith('k') ? 1 : 0;
  return Math.round(n * 1024 ** pow);
}

/** A share in [0, 1]; "5%" also accepted. */
export function parseRate(text: string): number {
  const t = text.trim();
  const n = t.endsWith('%') ? Number(t.slice(0, -1)) / 100 : Number(t);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`not a rate between 0 and 1: ${JSON.stringify(text)}`);
  return n;
}
