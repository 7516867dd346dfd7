// Prompts, error messages and file names are user or remote text: everything that reaches the page
// goes through these, so the report never runs or fetches anything it was handed.

const HTML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for an HTML text node or a double-quoted attribute value. */
export function escapeHtml(value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value);
  return text.replace(/[&<>"'`]/g, (ch) => HTML_ENTITIES[ch] ?? ch);
}

/**
 * A relative URL for an object name such as `clips/001 hero.mp4`: each segment percent-encoded,
 * so `#`, `?`, `:` or spaces in a name cannot turn it into a fragment, query or another scheme.
 * Returns undefined for names that would leave the output directory.
 */
export function relativeUrl(name: string): string | undefined {
  const segments = name.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
  if (segments.length === 0 || segments.some((s) => s === '..')) return undefined;
  if (/^[a-zA-Z]:$/.test(segments[0] ?? '') || name.startsWith('/')) return undefined;
  return segments.map((s) => encodeURIComponent(s)).join('/');
}

/** `data:` URL for an inline SVG document (UTF-8, percent-encoded). */
export function svgDataUrl(svg: string): string {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}
