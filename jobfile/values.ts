// Value formats of the job file, as plain functions shared by the schema and the expansion.

export const NAME_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
export const DIGITS_RE = /^[0-9]+$/;
export const RESOLUTION_RE = /^[1-9][0-9]{1,4}p$/;
export const RATIO_RE = /^[1-9][0-9]{0,3}:[1-9][0-9]{0,3}$/;
export const SIZE_RE = /^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$/;
export const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Placeholder names: what may appear as `{name}`; also the keys of `vars` and `matrix`. */
export const PLACEHOLDER_NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]*$/;
export const DURATION_RE = /^(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?(?:([0-9]+)ms)?$/;
export const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Milliseconds of a duration such as `500ms`, `10s`, `5m`, `2h` (or `1h30m`); undefined if invalid or zero. */
export function parseDuration(text: string): number | undefined {
  if (text === '') return undefined;
  const m = DURATION_RE.exec(text);
  if (!m) return undefined;
  const [, h, min, s, ms] = m;
  const total = Number(h ?? 0) * 3_600_000 + Number(min ?? 0) * 60_000 + Number(s ?? 0) * 1000 + Number(ms ?? 0);
  return total > 0 && Number.isSafeInteger(total) ? total : undefined;
}

const BYTE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** Bytes of a size such as `20GiB`, `500MB` or `1048576`; undefined if invalid or zero. */
export function parseByteSize(value: string | number): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(String(value));
  const unit = BYTE_UNITS[(m?.[2] || 'b').toLowerCase()];
  if (!m || unit === undefined) return undefined;
  const bytes = Math.floor(Number(m[1]) * unit);
  return bytes > 0 && Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** output.max_bytes when the job file does not say: far above any real render, far below a full disk. */
export const DEFAULT_MAX_VIDEO_BYTES = 20 * 2 ** 30;

export type SourceKind = 'http' | 'data' | 'local';

/** What a reference value is; undefined when it has a scheme other than http, https or data. */
export function classifySource(value: string): SourceKind | undefined {
  if (/^https?:\/\//i.test(value)) {
    try {
      const u = new URL(value);
      return u.hostname ? 'http' : undefined;
    } catch {
      return undefined;
    }
  }
  if (/^data:/i.test(value)) return /^data:[^,]*,/i.test(value) ? 'data' : undefined;
  // A single letter before the colon is a Windows drive, not a scheme.
  if (/^[A-Za-z][A-Za-z0-9+.-]+:/.test(value)) return undefined;
  return 'local';
}

/** A usable gateway base address and what normalising removed from it, or why the value is not one. */
export type BaseUrlCheck = { ok: true; normalised: string; removed: string[] } | { ok: false; problem: string };

/**
 * The one rule for gateway base addresses, used by the job file, the gateway client and doctor:
 * http(s), no credentials, no query or fragment. Surrounding spaces, trailing slashes and one
 * trailing `/v1` are removed (users paste them; the client adds `/v1/…` itself); `removed` names the
 * last two for the caller's warning. Model names are never touched here.
 */
export function normaliseBaseUrl(value: string): BaseUrlCheck {
  const text = value.trim();
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return { ok: false, problem: 'is not a URL' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { ok: false, problem: `uses ${u.protocol.slice(0, -1)}, not http or https` };
  if (u.username || u.password)
    return { ok: false, problem: 'contains credentials: never put them in a job file; the key goes in the environment' };
  if (u.search || u.hash || text.includes('?') || text.includes('#')) return { ok: false, problem: 'has a query or fragment' };
  const removed: string[] = [];
  if (text.endsWith('/')) removed.push('the trailing slash');
  let path = u.pathname.replace(/\/+$/, '');
  if (/\/v1$/i.test(path)) {
    path = path.slice(0, -3).replace(/\/+$/, '');
    removed.push('the trailing /v1');
  }
  return { ok: true, normalised: `${u.origin}${path}`, removed };
}

/** Why an output name (after placeholders) would escape its directory; undefined when it is safe. */
export function outputNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains a control character';
  if (name.startsWith('/') || name.startsWith('\\') || /^[A-Za-z]:/.test(name)) return 'is an absolute path';
  if (name.includes('\\')) return 'contains a backslash';
  const parts = name.split('/');
  if (parts.some((p) => p === '..')) return 'contains ".." and would escape the output directory';
  if (parts.some((p) => p === '' || p === '.')) return 'has an empty or "." path segment';
  if (name.length > 200) return 'is longer than 200 characters';
  return undefined;
}

/** gateway.request_timeout when a job file gives none; the gateway client's default too (gateway/client.ts). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** polling.backstop when a job file gives none; also what a render workflow assumes for settings recorded without it. */
export const DEFAULT_BACKSTOP_MS = 120_000;
