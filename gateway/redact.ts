// Keeps the API key out of every message, log line and thrown object. The client registers its
// key here once, so error constructors redact it even when a caller forgets to pass it.
import type { GatewayLog } from './contract';

const REDACTED = '[REDACTED]';
const registered = new Set<string>();

/** Remembers a secret for every later `redact` call in this process (the client does this for its key). */
export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= 4) registered.add(secret);
}

/** Forgets a secret registered earlier (tests). */
export function unregisterSecret(secret: string): void {
  registered.delete(secret);
}

const PATTERNS: RegExp[] = [
  // Header lines and JSON/JS renderings of the two credential headers.
  /(authorization["']?\s*[:=]\s*["']?\s*(?:bearer|basic)?\s*)[^\s"',;}]+/gi,
  /(x-api-key["']?\s*[:=]\s*["']?\s*)[^\s"',;}]+/gi,
  /(api[-_]?key["']?\s*[:=]\s*["']?\s*)[^\s"',;}]+/gi,
  /(\bbearer\s+)[A-Za-z0-9._~+/=-]+/gi,
  // Anything that looks like an OpenAI/Anthropic/new-api style key.
  /()\bsk-[A-Za-z0-9_-]{6,}/g,
];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Replaces credential header values, `sk-…` strings and the given (or registered) secrets with `[REDACTED]`. */
export function redact(text: string, secrets?: readonly string[]): string {
  let out = String(text);
  const all = new Set<string>(registered);
  for (const s of secrets ?? []) if (s && s.length >= 4) all.add(s);
  // Longest first, so a secret that contains another is removed whole.
  for (const secret of [...all].sort((a, b) => b.length - a.length)) {
    if (out.includes(secret)) out = out.replace(new RegExp(escapeRegExp(secret), 'g'), REDACTED);
  }
  for (const pattern of PATTERNS) {
    out = out.replace(pattern, (_match, prefix: string) => `${prefix}${REDACTED}`);
  }
  return out;
}

const SECRET_KEYS = /^(authorization|proxy-authorization|x-api-key|api[-_]?key|apikey|token|secret|password)$/i;

/**
 * A redacted deep copy: credential-named keys are replaced, strings pass through `redact`.
 * Errors become plain objects with name, message and code (never their other fields, which may
 * hold request options); cycles and depth are bounded.
 */
export function redactObject<T>(value: T, secrets?: readonly string[]): T {
  return walk(value, secrets, 0, new WeakSet()) as T;
}

function walk(value: unknown, secrets: readonly string[] | undefined, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redact(value, secrets);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 8 || seen.has(value)) return '[…]';
  seen.add(value);
  if (value instanceof Error) {
    const plain: Record<string, unknown> = { name: value.name, message: redact(value.message, secrets) };
    const code = (value as { code?: unknown }).code;
    if (typeof code === 'string') plain.code = code;
    return plain;
  }
  if (Array.isArray(value)) return value.map((v) => walk(v, secrets, depth + 1, seen));
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEYS.test(k) && v !== undefined && v !== null ? REDACTED : walk(v, secrets, depth + 1, seen);
  }
  return out;
}

/** The client's log: every message and field redacted; a logger that throws never breaks a call. */
export function redactedLog(log: GatewayLog | undefined, secrets: readonly string[]): GatewayLog {
  if (!log) return () => undefined;
  return (level, message, fields) => {
    try {
      log(level, redact(message, secrets), fields ? redactObject(fields, secrets) : undefined);
    } catch {
      // A broken logger must not break a call.
    }
  };
}

/**
 * Text a gateway wrote (a failure reason, an error message) as it may be kept: redacted (a gateway
 * that echoes the Authorization header would otherwise put the key into workflow history, the
 * manifest and the report), on one line, and at most `max` characters, so twenty of them stay far
 * under Temporal's payload limit whatever a gateway sends.
 */
export function gatewayText(text: string, max = 300): string {
  const flat = redact(text.length > 4 * max ? text.slice(0, 4 * max) : text)
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
