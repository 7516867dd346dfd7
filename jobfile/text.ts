// Small text helpers for messages: nearest-name suggestions and safe value display.

export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] ?? 0;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j] ?? 0;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      prev[j] = Math.min(up + 1, (prev[j - 1] ?? 0) + 1, diag + cost);
      diag = up;
    }
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

export function quoteList(values: readonly string[]): string {
  return values.join(', ');
}

/** One line, no control characters, no key-like strings: safe to print anywhere. */
export function cleanMessage(text: string): string {
  // eslint-disable-next-line no-control-regex
  return redact(text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
