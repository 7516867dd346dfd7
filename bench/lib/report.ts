// The one output contract of every benchmark: human lines first, then as the LAST line one JSON
// object {"figure","value","unit","baseline","ratio","target","meets"} (extra fields allowed).
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';

export interface Figure {
  figure: string;
  value: number;
  unit: string;
  /** Measured in the same run on the same machine (null when there is none). */
  baseline: number | null;
  ratio: number | null;
  target: string;
  meets: boolean;
  [extra: string]: unknown;
}

const round = (v: number, digits = 3): number => Number(v.toFixed(digits));

/** The middle value (the mean of the two middle ones for an even count); 0 for none. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return 0;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function figureLine(f: Figure): string {
  return JSON.stringify({
    ...f,
    value: round(f.value),
    baseline: f.baseline === null ? null : round(f.baseline),
    ratio: f.ratio === null ? null : round(f.ratio),
  });
}

/** Prints the final JSON line. Nothing may be printed on stdout after it. */
export function emit(f: Figure): void {
  process.stdout.write(`${figureLine(f)}\n`);
}

export function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Machine state for the record: the figures are only meaningful next to it. */
export function machineLine(): string {
  const [l1, l5] = loadavg();
  return `load average ${l1!.toFixed(2)} (1 min), ${l5!.toFixed(2)} (5 min)`;
}

/** `--name value` integer flags with defaults and an upper bound (bounded loops). */
export function intFlags<T extends Record<string, number>>(defaults: T, max = 1_000_000): T {
  const options = Object.fromEntries(Object.keys(defaults).map((k) => [k, { type: 'string' as const }]));
  const { values } = parseArgs({ options, strict: false, allowPositionals: true });
  const out = { ...defaults };
  for (const key of Object.keys(defaults) as Array<keyof T & string>) {
    const raw = values[key];
    if (typeof raw !== 'string') continue;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0 || n > max) throw new Error(`--${key} must be a positive number up to ${max}, got ${raw}`);
    (out as Record<string, number>)[key] = n;
  }
  return out;
}

export function fail(error: unknown): never {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
