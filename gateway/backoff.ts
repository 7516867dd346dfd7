// Pure timing helpers: Retry-After, poll hints and capped exponential backoff with jitter.

type HeaderValue = string | string[] | undefined;

function first(value: HeaderValue): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * `Retry-After` as milliseconds from `nowMs`: delta-seconds (`"3"`, `"1.5"`) or an HTTP date.
 * Dates in the past give 0; unreadable values give undefined.
 */
export function parseRetryAfter(value: HeaderValue, nowMs: number): number | undefined {
  const text = first(value)?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number.parseFloat(text) * 1000);
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * The longest poll hint taken from a gateway. A header is untrusted: a larger value says nothing a
 * gateway could mean (an hour is longer than any render's status takes to move), and the workflow
 * bounds the wait by polling.max anyway (workflows/polling.ts, docs/limits.md).
 */
export const MAX_POLL_HINT_MS = 3_600_000;

/** The server's hint for the next status check: `openai-poll-after-ms`, else `Retry-After`; at most MAX_POLL_HINT_MS. */
export function parsePollAfter(headers: Record<string, HeaderValue>, nowMs: number): number | undefined {
  const ms = first(headers['openai-poll-after-ms'])?.trim();
  const hint = ms && /^\d+(\.\d+)?$/.test(ms) ? Math.round(Number.parseFloat(ms)) : parseRetryAfter(headers['retry-after'], nowMs);
  return hint === undefined || !Number.isFinite(hint) ? undefined : Math.min(hint, MAX_POLL_HINT_MS);
}

export interface BackoffOptions {
  baseMs?: number;
  maxMs?: number;
  /** 0..1; injected for tests. */
  random?: () => number;
}

/** "Full jitter" between half and all of min(max, base * 2^attempt); attempt counts from 0. */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const baseMs = options.baseMs ?? 500;
  const maxMs = options.maxMs ?? 30_000;
  const random = options.random ?? Math.random;
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(0, attempt), 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
