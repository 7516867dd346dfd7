// loadJobFile: read, parse with positions, validate, expand. Never throws for bad input.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { type Ctx, type FileAccess, nodeFiles, unreadableBecause } from './context';
import { dateIn } from './run-date';
import { expandItems } from './expand';
import { ModelSites } from './model-sites';
import { issuesToErrors, parseOptions } from './issues';
import type { JobFileError, Plan } from './plan';
import { type Path, YamlPositions, yamlError } from './positions';
import { jobFileSchema } from './schema';
import { buildSettings, jobValues } from './settings';
import { rowSources, yamlSources } from './sources';
import { cleanMessage } from './text';

export type LoadResult =
  | { ok: true; plan: Plan }
  | { ok: false; errors: JobFileError[]; warnings: string[]; /** the job's name when it could be read */ job?: string };

export interface LoadOptions {
  /** The run's date for `{date}`, YYYY-MM-DD; default: today in local time. */
  runDate?: string;
  /** File access (tests); default: the real file system. */
  files?: FileAccess;
}

function byPosition(a: JobFileError, b: JobFileError, jobFile: string): number {
  if (a.file !== b.file) return a.file === jobFile ? -1 : b.file === jobFile ? 1 : a.file < b.file ? -1 : 1;
  return a.line - b.line || a.column - b.column || (a.message < b.message ? -1 : a.message > b.message ? 1 : 0);
}

/** Sorted by file (the job file first), line, column; exact repeats removed. */
export function sortErrors(errors: readonly JobFileError[], jobFile: string): JobFileError[] {
  const seen = new Set<string>();
  return [...errors]
    .sort((a, b) => byPosition(a, b, jobFile))
    .filter((e) => {
      const k = `${e.file}\u0000${e.line}\u0000${e.column}\u0000${e.message}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
}

/** Warnings (`file:line:column: warning: ...`) in position order. */
function sortWarnings(warnings: readonly string[]): string[] {
  const at = (w: string): [number, number] => {
    const m = /:(\d+):(\d+): warning:/.exec(w);
    return m ? [Number(m[1]), Number(m[2])] : [0, 0];
  };
  return [...warnings]
    .sort((a, b) => {
      const [la, ca] = at(a);
      const [lb, cb] = at(b);
      return la - lb || ca - cb;
    })
    .map(cleanMessage);
}

const KEY_IN_TEXT = /\bsk-[A-Za-z0-9_-]{16,}/;

/** Any string anywhere that looks like an API key is an error: keys belong in the environment. */
function scanForKeys(value: unknown, path: PropertyKey[], ctx: Ctx): void {
  if (typeof value === 'string') {
    if (KEY_IN_TEXT.test(value) && !(path[0] === 'gateway' && path[1] === 'api_key_env')) {
      ctx.errors.push(
        ctx.pos.error(
          path,
          'this looks like an API key: never put a key in a job file; put it in the environment variable named by gateway.api_key_env',
        ),
      );
    }
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => scanForKeys(v, [...path, i], ctx));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) scanForKeys(v, [...path, k], ctx);
  }
}

function failure(errors: JobFileError[], warnings: string[], file: string, job?: string): LoadResult {
  const clean = errors.map((e) => ({ ...e, message: cleanMessage(e.message) }));
  return { ok: false, errors: sortErrors(clean, file), warnings: sortWarnings(warnings), job };
}

export async function loadJobFile(path: string, options: LoadOptions = {}): Promise<LoadResult> {
  const file = path;
  let text: string;
  try {
    // Given file access reads the job file too: a worker loads a job's stored copy by its original path.
    const read = options.files ? options.files.readText(path) : await readFile(path, 'utf8');
    if (read instanceof Error) throw read;
    text = read;
  } catch (e) {
    return {
      ok: false,
      errors: [{ file, line: 0, column: 0, message: `cannot read the job file: ${unreadableBecause(e)}` }],
      warnings: [],
    };
  }
  return parseJobFile(text, path, options);
}

/** Same as loadJobFile, for text already in memory (`path` locates relative files and names errors). */
export function parseJobFile(text: string, path: string, options: LoadOptions = {}): LoadResult {
  const file = path;
  const runDate = options.runDate ?? dateIn(Date.now());
  if (!/^\d{4}-\d{2}-\d{2}$/.test(runDate)) {
    return { ok: false, errors: [{ file, line: 0, column: 0, message: `run date must be YYYY-MM-DD, got "${runDate}"` }], warnings: [] };
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true, merge: true });
  const pos = new YamlPositions(file, doc, lineCounter);
  const warnings = doc.warnings.map((w) => {
    const e = yamlError(file, w);
    return `${e.file}:${e.line}:${e.column}: warning: ${e.message}`;
  });
  if (doc.errors.length > 0)
    return failure(
      doc.errors.map((e) => yamlError(file, e)),
      warnings,
      file,
    );

  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    return failure([{ file, line: 1, column: 1, message: `YAML: ${(e as Error).message}` }], warnings, file);
  }
  if (raw === null || raw === undefined) {
    return failure(
      [{ file, line: 1, column: 1, message: 'the job file is empty: it needs at least name, gateway and items' }],
      warnings,
      file,
    );
  }
  const job = typeof raw === 'object' && typeof (raw as { name?: unknown }).name === 'string' ? (raw as { name: string }).name : undefined;
  const ctx: Ctx = { file, dir: dirname(resolve(path)), pos, errors: [], warnings, fs: options.files ?? nodeFiles, runDate };
  scanForKeys(raw, [], ctx);
  const parsed = jobFileSchema.safeParse(raw, parseOptions);
  if (!parsed.success) {
    const locate = (p: Path, message: string, anchor?: 'value' | 'key'): JobFileError => pos.error(p, message, anchor);
    return failure([...ctx.errors, ...issuesToErrors(parsed.error.issues, jobFileSchema, locate)], warnings, file, job);
  }
  const data = parsed.data;
  const values = jobValues(data, ctx);
  const rawOutput = ((raw as Record<string, unknown>).output ?? {}) as Record<string, unknown>;
  const settings = buildSettings(data, ctx, values, rawOutput);
  const sources = [...yamlSources(data, ctx), ...rowSources(data, ctx)];
  if (sources.length === 0 && ctx.errors.length === 0) {
    ctx.errors.push(pos.error(data.items ? ['items'] : [], 'the job has no items: add entries to items, or rows with items_from'));
  }
  const sites = new ModelSites(data, ctx);
  const items = expandItems(data, ctx, sources, values, sites);
  if (ctx.errors.length > 0) return failure(ctx.errors, ctx.warnings, file, data.name);
  sites.enhance();
  const modelSites = sites.list();
  return { ok: true, plan: { ...settings, jobFile: resolve(path), runDate, items, warnings: sortWarnings(ctx.warnings), modelSites } };
}
