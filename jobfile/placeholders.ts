// `{placeholder}` templates: `{name}`, `{name:03}` (zero-padded), `{{` and `}}` for literal braces.
// Anything else in braces (JSON-like text in a prompt) is left as it is.
import { nearest } from './text';

export type TemplatePart = string | { name: string; width?: number; format?: string };

const TOKEN = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_-]*)(?::([^{}\s]*))?\}/g;
const cache = new Map<string, TemplatePart[]>();

export function parseTemplate(template: string): TemplatePart[] {
  const hit = cache.get(template);
  if (hit) return hit;
  const parts: TemplatePart[] = [];
  let last = 0;
  let literal = '';
  for (const m of template.matchAll(TOKEN)) {
    literal += template.slice(last, m.index);
    last = m.index + m[0].length;
    if (m[0] === '{{') literal += '{';
    else if (m[0] === '}}') literal += '}';
    else {
      if (literal) parts.push(literal);
      literal = '';
      const format = m[2];
      const width = format !== undefined && /^0[0-9]{1,2}$/.test(format) ? Number(format) : undefined;
      parts.push({ name: m[1] as string, width, format });
    }
  }
  literal += template.slice(last);
  if (literal) parts.push(literal);
  if (cache.size > 50_000) cache.clear();
  cache.set(template, parts);
  return parts;
}

export function placeholderNames(template: string): string[] {
  return parseTemplate(template).flatMap((p) => (typeof p === 'string' ? [] : [p.name]));
}

export type RenderResult = { ok: true; value: string } | { ok: false; problem: string };

/** Fills a template from `values`; `unavailable` names placeholders known but not allowed here (with why). */
export function renderTemplate(
  template: string,
  values: ReadonlyMap<string, string>,
  where: string,
  unavailable?: ReadonlyMap<string, string>,
): RenderResult {
  let out = '';
  for (const part of parseTemplate(template)) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const value = values.get(part.name);
    if (value === undefined) {
      const why = unavailable?.get(part.name);
      if (why) return { ok: false, problem: `placeholder {${part.name}} cannot be used in ${where}: ${why}` };
      const hint = nearest(part.name, values.keys());
      return {
        ok: false,
        problem: `unknown placeholder {${part.name}} in ${where}; ${hint ? `did you mean {${hint}}?` : `known: ${[...values.keys()].map((k) => `{${k}}`).join(', ')}`}`,
      };
    }
    if (part.format !== undefined && part.width === undefined) {
      return {
        ok: false,
        problem: `placeholder {${part.name}:${part.format}} in ${where} has an unknown format; use a zero-padded width such as {${part.name}:03}`,
      };
    }
    out += part.width !== undefined && /^[0-9]+$/.test(value) ? value.padStart(part.width, '0') : value;
  }
  return { ok: true, value: out };
}
