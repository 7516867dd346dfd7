// Item keys: a short stable hash of the resolved request (canonical JSON, sorted keys).
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** 12 hex digits of sha256 over the canonical JSON of `value`. */
export function shortHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex').slice(0, 12);
}

/** A matrix combination as a readable key suffix: `16:9` -> `16-9`. */
export function comboSuffix(values: readonly (string | number | boolean)[]): string {
  return values.map((v) => String(v).replace(/[^A-Za-z0-9._-]+/g, '-')).join('.');
}
