// loadJobFile: read, parse with positions, validate, expand. Never throws for bad input.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { type Ctx, type FileAccess, nodeFiles, unreadableBecause } from './context';
import type { JobFileData } from './schema';
import { dateIn } from './run-date';
import { expandItems, MAX_ITEMS } from './expand';
import { matrixSize } from './matrix';
import { ModelSites } from './model-sites';
import { issuesToErrors, parseOptions } from './issues';
import type { JobFileError, Plan } from './plan';
import type { RedoTake } from './takes';
import { type Path, YamlPositions, yamlError } from './positions';
import { resolvePrices } from './pricing';
import { type NotifySettings, readNotifySettings, undefinedTargets } from './notify-settings';
import { refuseOwnReadScope } from './read-scope';
import { jobFileSchema } from './schema';
import { buildSettings, jobValues } from './settings';
import { type RowRoom, rowSources, yamlSources } from './sources';
import { cleanMessage, decodeUtf8, NotUtf8Error } from './text';
import { aliasExpansionProblem } from './yaml-size';

export type LoadResult =
  | { ok: true; plan: Plan }
  | { ok: false; errors: JobFileError[]; warnings: string[]; /** the job's name when it could be read */ job?: string };

export interface LoadOptions {
  /** The run's date for `{date}`, YYYY-MM-DD; default: today in local time. */
  runDate?: string;
  /** File access (tests); default: the real file system. */
  files?: FileAccess;
  /** `--prices FILE`: a LiteLLM-format prices file, relative to the working directory (jobfile/pricing.ts). */
  pricesFile?: string;
  /** The prices file in the user's settings (jobfile/user-prices.ts): with --prices, it outranks the job file's prices. */
  userPricesFile?: string;
  /** `run --budget`: a job file's price of $0 for a model the user has not priced is refused (jobfile/pricing.ts). */
  budgetUsd?: number;
  /** `run --redo`/`--only`: the plan holds only these takes (jobfile/takes.ts, docs/takes.md). */
  redo?: readonly RedoTake[];
  /**
   * Folders outside the job file's own that the user lets it read: `--allow-read DIR` and the user's
   * read settings (jobfile/read-settings.ts), absolute. Never from the job file (jobfile/read-scope.ts).
   */
  allowRead?: readonly string[];
  /**
   * The notification targets a job file's `notify:` may name (jobfile/notify-settings.ts); default:
   * this process's user's notify.yaml, read only when the job file names targets. On a worker (a
   * schedule's run), the worker's.
   */
  notifySettings?: NotifySettings;
  /**
   * false on a worker: its run sends with the worker's notify.yaml, and a name that does not define
   * fails that name's delivery (activities/notify.ts), not the job's renders (docs/notifications.md).
   */
  checkNotifyTargets?: boolean;
  /**
   * The kept takes (storage/records/kept-takes.ts), by the first take's key: a need on an item with a kept
   * take resolves to that take instead of take 1 (docs/chains.md). Absent: take 1.
   */
  keptTakes?: ReadonlyMap<string, string>;
}

/** The prices a user brings to a job file (`--prices`, the settings file) and `run --budget`. */
export type UserPrices = Pick<LoadOptions, 'pricesFile' | 'userPricesFile' | 'budgetUsd'>;

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

/**
 * How many items_from rows the job may still have, from the matrix and the items list as written:
 * nothing is built before this (a 1.4 KB file of four 100-value matrix keys is 10^8 items). Undefined
 * after reporting that the matrix and items alone are too many.
 */
function itemCountRoom(data: JobFileData, ctx: Ctx): RowRoom | undefined {
  const { combinations, shape } = matrixSize(data);
  const listed = data.items?.length ?? 0;
  // Every source gets every combination: even rows alone get at least one each.
  const total = combinations * Math.max(listed, 1);
  if (total > MAX_ITEMS) {
    const items = `${listed} item${listed === 1 ? '' : 's'}`;
    const what = !shape ? items : listed > 0 ? `matrix: ${shape} combinations x ${items}` : `matrix: ${shape} combinations`;
    ctx.errors.push(
      ctx.pos.error(
        data.matrix ? ['matrix'] : ['items'],
        `the job expands to ${total} items (${what}); at most ${MAX_ITEMS} are allowed`,
        'key',
      ),
    );
    return undefined;
  }
  return { rows: Math.floor(MAX_ITEMS / combinations) - listed, combinations, listed };
}

export async function loadJobFile(path: string, options: LoadOptions = {}): Promise<LoadResult> {
  const file = path;
  let text: string;
  try {
    // Given file access reads the job file too: a worker loads a job's stored copy by its original path.
    const read = options.files ? options.files.readText(path) : decodeUtf8(await readFile(path));
    if (read instanceof Error) throw read;
    text = read;
  } catch (e) {
    if (e instanceof NotUtf8Error) return failure([{ file, line: e.line, column: e.column, message: e.message }], [], file);
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

  const tooLarge = aliasExpansionProblem(doc, lineCounter, file);
  if (tooLarge) return failure([tooLarge], warnings, file);
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
  const ctx: Ctx = {
    file,
    dir: dirname(resolve(path)),
    pos,
    errors: [],
    warnings,
    fs: options.files ?? nodeFiles,
    runDate,
    allowRead: options.allowRead ?? [],
    outsideReads: new Set(),
  };
  scanForKeys(raw, [], ctx);
  const parsed = jobFileSchema.safeParse(refuseOwnReadScope(raw, ctx), parseOptions);
  if (!parsed.success) {
    const locate = (p: Path, message: string, anchor?: 'value' | 'key'): JobFileError => pos.error(p, message, anchor);
    return failure([...ctx.errors, ...issuesToErrors(parsed.error.issues, jobFileSchema, locate)], warnings, file, job);
  }
  const data = parsed.data;
  const values = jobValues(data, ctx);
  const rawOutput = ((raw as Record<string, unknown>).output ?? {}) as Record<string, unknown>;
  const settings = buildSettings(data, ctx, values, rawOutput);
  if (data.notify?.length && options.checkNotifyTargets !== false) checkNotifyTargets(data.notify, ctx, options.notifySettings);
  const room = itemCountRoom(data, ctx);
  if (room === undefined) return failure(ctx.errors, ctx.warnings, file, data.name);
  const sources = [...yamlSources(data, ctx), ...rowSources(data, ctx, room)];
  if (sources.length === 0 && ctx.errors.length === 0) {
    ctx.errors.push(pos.error(data.items ? ['items'] : [], 'the job has no items: add entries to items, or rows with items_from'));
  }
  const sites = new ModelSites(data, ctx);
  const { items, assemble } = expandItems(data, ctx, sources, values, settings.output, sites, options.redo, {
    keptTakes: options.keptTakes,
  });
  const { pricesFile, userPricesFile, budgetUsd } = options;
  const pricing = resolvePrices(data, ctx, items, { pricesFile, userPricesFile, budgetUsd });
  if (ctx.errors.length > 0) return failure(ctx.errors, ctx.warnings, file, data.name);
  sites.enhance();
  const modelSites = sites.list();
  const plan = {
    ...settings,
    ...(assemble && assemble.length > 0 ? { assemble } : {}),
    jobFile: resolve(path),
    runDate,
    items,
    warnings: sortWarnings(ctx.warnings),
    modelSites,
  };
  return { ok: true, plan: pricing ? { ...plan, pricing } : plan };
}

/** A job file may name only targets its user (or, for a schedule, its worker) defined: each other name is an error at its line. */
function checkNotifyTargets(names: readonly string[], ctx: Ctx, given: NotifySettings | undefined): void {
  let settings: NotifySettings;
  try {
    settings = given ?? readNotifySettings();
  } catch (error) {
    ctx.errors.push(ctx.pos.error(['notify'], `cannot check the notify targets: ${(error as Error).message}`));
    return;
  }
  names.forEach((name, i) => {
    const problem = undefinedTargets([name], settings);
    if (problem) ctx.errors.push(ctx.pos.error(['notify', i], problem));
  });
}
