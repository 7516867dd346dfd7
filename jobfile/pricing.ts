// The prices of a job's models, from where the user keeps them: the user's own (`--prices FILE`,
// then the prices file in the user's settings: jobfile/user-prices.ts) win, then the job file's
// `pricing`, then `pricing_file:`. Files are in LiteLLM's model cost map format
// (model_prices_and_context_window.json). Only the models the plan uses are kept, and only their
// entries are checked: a bad price elsewhere in a shared map is not this job's problem.
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { type Ctx, warn } from './context';
import type { JobFileError, PlanItem } from './plan';
import { type Anchor, YamlPositions, type Path } from './positions';
import { type ModelPrice, type PriceTable, resolutionLabel } from './prices';
import { checkJobPrice } from './user-prices';
import { readScopeProblem } from './read-scope';
import type { JobFileData } from './schema';
import { nearest, show } from './text';

/** A prices file larger than this is refused (LiteLLM's whole map is under 2 MB). */
export const MAX_PRICES_FILE_BYTES = 64 * 1024 * 1024;

/** LiteLLM's keys reelflow reads; see docs/costs.md. */
const LITELLM = {
  videoPerSecond: 'output_cost_per_video_per_second',
  perSecond: 'output_cost_per_second',
  perSecondAt: 'output_cost_per_second_',
  inputToken: 'input_cost_per_token',
  outputToken: 'output_cost_per_token',
} as const;

const USD_ALLOWED = 'a price in USD: a number 0 or more, such as 0.10';
/** Where the user keeps prices of their own, as messages name it (jobfile/user-prices.ts userPricesPath). */
const USER_PRICES_HINT = '~/.config/reelflow/prices.json';

function fromJobFile(price: NonNullable<JobFileData['pricing']>[string]): ModelPrice {
  const out: ModelPrice = { source: 'job file' };
  if (typeof price.per_second === 'number') out.perSecond = price.per_second;
  else if (price.per_second) {
    out.perSecondByResolution = {};
    for (const [k, v] of Object.entries(price.per_second)) out.perSecondByResolution[resolutionLabel(k) ?? k] = v;
  }
  if (price.per_video !== undefined) out.perVideo = price.per_video;
  if (price.default_seconds !== undefined) out.defaultSeconds = price.default_seconds;
  if (price.per_million_input_tokens !== undefined) out.perMillionInputTokens = price.per_million_input_tokens;
  if (price.per_million_output_tokens !== undefined) out.perMillionOutputTokens = price.per_million_output_tokens;
  return out;
}

/** One prices file, parsed; positions are worked out only when there is an error to place. */
class PricesFile {
  private positions?: YamlPositions;
  constructor(
    /** Where its problems are reported (relative to the job file as the user named it). */
    readonly display: string,
    /** As the user wrote it, for the estimate's sources. */
    private readonly label: string,
    private readonly text: string,
    readonly entries: Record<string, unknown>,
    private readonly errors: JobFileError[],
  ) {}

  error(path: Path, message: string, anchor: Anchor = 'value'): void {
    if (!this.positions) {
      const lines = new LineCounter();
      this.positions = new YamlPositions(this.display, parseDocument(this.text, { lineCounter: lines, uniqueKeys: false }), lines);
    }
    this.errors.push(this.positions.error(path, message, anchor));
  }

  /** The entry for `model`: its own key, else the one entry whose provider-prefixed key ends in `/model`. */
  entryFor(model: string): { key: string; entry: Record<string, unknown> } | { ambiguous: string[] } | undefined {
    const own = Object.prototype.hasOwnProperty.call(this.entries, model) ? this.entries[model] : undefined;
    if (own !== undefined) return isMap(own) ? { key: model, entry: own } : undefined;
    const keys = Object.keys(this.entries).filter((k) => k.endsWith(`/${model}`) && isMap(this.entries[k]));
    if (keys.length === 0) return undefined;
    const prices = new Set(keys.map((k) => JSON.stringify(this.pricesIn(this.entries[k] as Record<string, unknown>))));
    if (prices.size > 1) return { ambiguous: keys };
    return { key: keys[0] as string, entry: this.entries[keys[0] as string] as Record<string, unknown> };
  }

  private pricesIn(entry: Record<string, unknown>): Record<string, unknown> {
    return Object.fromEntries(Object.entries(entry).filter(([k]) => k.startsWith('output_cost_per') || k === LITELLM.inputToken));
  }

  /** The entry as a ModelPrice; a bad value is refused at its line in the file. */
  price(key: string, entry: Record<string, unknown>): ModelPrice | undefined {
    return litellmPrice(entry, `${this.label} (${key})`, (field, message, anchor) => this.error([key, field], message, anchor));
  }
}

/**
 * One entry of LiteLLM's model cost map as a ModelPrice, with LiteLLM's precedence (per video second,
 * then by resolution, then per second): the same reader for a prices file and for the `model_info`
 * a LiteLLM proxy publishes (gateway/published-prices.ts). A bad value is left out and reported to
 * `bad`; undefined when the entry holds no price reelflow reads.
 */
export function litellmPrice(
  entry: Record<string, unknown>,
  source: string,
  bad: (field: string, message: string, anchor: Anchor) => void,
): ModelPrice | undefined {
  const out: ModelPrice = { source };
  const usd = (field: string): number | undefined => {
    const v = entry[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      bad(field, `${field} must be ${USD_ALLOWED}, got ${show(v)}`, 'value');
      return undefined;
    }
    return v;
  };
  const flat = usd(LITELLM.videoPerSecond);
  if (flat !== undefined) out.perSecond = flat;
  else {
    const perSecond = usd(LITELLM.perSecond);
    if (perSecond !== undefined) out.perSecond = perSecond;
    for (const field of Object.keys(entry).filter((k) => k.startsWith(LITELLM.perSecondAt))) {
      const suffix = field.slice(LITELLM.perSecondAt.length);
      const label = resolutionLabel(suffix);
      if (label === undefined) {
        bad(field, `"${suffix}" is not a resolution; use one such as 480p, 720p, 1080p, 2k or 4k`, 'key');
        continue;
      }
      const v = usd(field);
      if (v !== undefined) (out.perSecondByResolution ??= {})[label] = v;
    }
  }
  const input = usd(LITELLM.inputToken);
  const output = usd(LITELLM.outputToken);
  if (input !== undefined && output !== undefined) {
    out.perMillionInputTokens = input * 1e6;
    out.perMillionOutputTokens = output * 1e6;
  }
  const { source: _s, ...prices } = out;
  return Object.keys(prices).length > 0 ? out : undefined;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Where a JSON.parse error is: Node names the offset ("at position 12"). */
function jsonErrorAt(text: string, message: string): { line: number; column: number } {
  const m = /at position (\d+)/.exec(message) ?? /line (\d+) column (\d+)/.exec(message);
  if (m && m.length === 3) return { line: Number(m[1]), column: Number(m[2]) };
  if (!m) return { line: 1, column: 1 };
  const before = text.slice(0, Number(m[1]));
  const line = before.split('\n').length;
  return { line, column: before.length - before.lastIndexOf('\n') };
}

interface FileRef {
  /** As written (job file: relative to its folder; --prices: relative to the working directory). */
  given: string;
  /** Where its problems are reported. */
  display: string;
  abs: string;
  /** Reports a problem with the file as a whole (unreadable, outside the job's folder). */
  fail: (message: string) => void;
  /** Where the job file names it (a read outside its folder is listed there). */
  locate?: (message: string) => JobFileError;
  /** Named by the user, so it may be outside the job file's folder (system trees never: read-scope.ts). */
  allowOutside: boolean;
}

function openPricesFile(ctx: Ctx, ref: FileRef): PricesFile | undefined {
  const outOfScope = readScopeProblem(ctx, ref.abs, ref.allowOutside, ref.locate);
  if (outOfScope) {
    ref.fail(outOfScope);
    return undefined;
  }
  const size = ctx.fs.size?.(ref.abs);
  if (size !== undefined && size > MAX_PRICES_FILE_BYTES) {
    ref.fail(`prices file "${ref.given}" is ${size} bytes; at most ${MAX_PRICES_FILE_BYTES} are read`);
    return undefined;
  }
  const text = ctx.fs.readText(ref.abs);
  if (text instanceof Error) {
    ref.fail(`prices file "${ref.given}" cannot be read: ${text.message} (looked for ${ref.abs})`);
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    // JSON.parse's own message quotes the text near the fault: it stays out, the file may hold anything.
    ctx.errors.push({
      file: ref.display,
      ...jsonErrorAt(text, (e as Error).message),
      message: `not valid JSON here; a prices file is LiteLLM's model cost map: {"MODEL": {"output_cost_per_second": 0.10}}`,
    });
    return undefined;
  }
  if (!isMap(parsed)) {
    ctx.errors.push({
      file: ref.display,
      line: 1,
      column: 1,
      message: `a prices file is a JSON object from model name to its prices (LiteLLM's model cost map), got ${show(parsed)}`,
    });
    return undefined;
  }
  return new PricesFile(ref.display, ref.given, text, parsed, ctx.errors);
}

/** The models a plan sends to: every item's model, and the enhance model. */
export function modelsUsed(items: readonly PlanItem[], enhanceModel: string | undefined): Set<string> {
  const used = new Set(items.map((i) => i.request.model));
  if (enhanceModel !== undefined) used.add(enhanceModel);
  return used;
}

export interface PriceSources {
  /** `--prices FILE`, relative to the working directory. */
  pricesFile?: string;
  /** The prices file in the user's settings (userPricesPath): read when it is there. */
  userPricesFile?: string;
  /** `run --budget`: a job file's price of $0 for a model the user has not priced is then refused. */
  budgetUsd?: number;
}

/**
 * The price table of the models the plan uses, or undefined when the job names no prices at all.
 * Problems go to ctx.errors with their file, line and column.
 */
export function resolvePrices(data: JobFileData, ctx: Ctx, items: readonly PlanItem[], sources: PriceSources = {}): PriceTable | undefined {
  const userFile = sources.userPricesFile !== undefined && ctx.fs.isFile(sources.userPricesFile) ? sources.userPricesFile : undefined;
  if (!data.pricing && !data.pricing_file && !sources.pricesFile && !userFile) return undefined;
  const used = modelsUsed(items, data.enhance?.model);
  for (const model of Object.keys(data.pricing ?? {})) {
    if (used.has(model)) continue;
    const hint = nearest(
      model,
      [...used].filter((m) => !data.pricing?.[m]),
    );
    warn(
      ctx,
      ['pricing', model],
      `pricing.${model} is not used: no item renders with ${model} and it does not enhance prompts${hint ? `; did you mean ${hint}?` : ''}`,
    );
  }
  const files: PricesFile[] = [];
  if (sources.pricesFile) {
    const given = sources.pricesFile;
    const abs = resolve(given);
    const file = openPricesFile(ctx, {
      given,
      display: given,
      abs,
      allowOutside: true,
      fail: (message) => ctx.errors.push({ file: given, line: 0, column: 0, message: `--prices: ${message}` }),
    });
    if (file) files.push(file);
  }
  if (userFile) {
    const file = openPricesFile(ctx, {
      given: userFile,
      display: userFile,
      abs: userFile,
      allowOutside: true,
      fail: (message) => ctx.errors.push({ file: userFile, line: 0, column: 0, message }),
    });
    if (file) files.push(file);
  }
  // The user's files, then the job's: the user's prices are found before the job file's own.
  const usersFiles = files.length;
  if (data.pricing_file) {
    const given = data.pricing_file;
    const abs = isAbsolute(given) ? given : resolve(ctx.dir, given);
    const display = isAbsolute(given) ? given : join(dirname(ctx.file), given);
    const file = openPricesFile(ctx, {
      given,
      display,
      abs,
      allowOutside: false,
      fail: (message) => ctx.errors.push(ctx.pos.error(['pricing_file'], message)),
      locate: (message) => ctx.pos.error(['pricing_file'], message),
    });
    if (file) files.push(file);
  }
  const table: PriceTable = {};
  for (const model of [...used].sort()) {
    const users = priceIn(files.slice(0, usersFiles), model, ctx);
    const own = data.pricing?.[model];
    if (own) checkAgainstUsers(model, fromJobFile(own), users, { data, ctx, items, budgetUsd: sources.budgetUsd });
    const price = users ?? (own ? fromJobFile(own) : priceIn(files.slice(usersFiles), model, ctx));
    if (price) table[model] = price;
  }
  return table;
}

/** The first of `files` that prices `model`; an entry that matches ambiguously leaves it unpriced (said). */
function priceIn(files: readonly PricesFile[], model: string, ctx: Ctx): ModelPrice | undefined {
  for (const file of files) {
    const found = file.entryFor(model);
    if (!found) continue;
    if ('ambiguous' in found) {
      ctx.warnings.push(
        `${file.display}: warning: ${model} matches ${found.ambiguous.join(', ')} with different prices; ` +
          `it stays unpriced: add pricing.${model} to the job file`,
      );
      return undefined;
    }
    const price = file.price(found.key, found.entry);
    if (price) return price;
  }
  return undefined;
}

/**
 * A job file's price that the user's outranks, or that a budget could not hold, is named at its
 * line: below the user's own price it is a warning (the user's is used); $0 for a model the user
 * has not priced stops a run with --budget (the budget would count nothing for it), and is a
 * warning under the job file's own budget.
 */
function checkAgainstUsers(
  model: string,
  job: ModelPrice,
  users: ModelPrice | undefined,
  at: { data: JobFileData; ctx: Ctx; items: readonly PlanItem[]; budgetUsd: number | undefined },
): void {
  const { data, ctx, items, budgetUsd } = at;
  const check = checkJobPrice(model, job, users, items, data.enhance?.model);
  const path = ['pricing', model];
  if (users) {
    if (check.below) {
      const { jobUsd, userUsd, per } = check.below;
      warn(
        ctx,
        path,
        `pricing.${model} is below your price for ${model} (${usdText(jobUsd)} against ${usdText(userUsd)} ${per}, from ${users.source}): your price is used`,
      );
    }
    return;
  }
  if (!check.free) return;
  const free = `pricing.${model} prices ${model} at $0`;
  const fix = `give ${model} a price of your own (--prices FILE, or ${USER_PRICES_HINT})`;
  if (budgetUsd !== undefined) {
    ctx.errors.push(
      ctx.pos.error(path, `${free} under --budget ${budgetUsd}: the budget would count nothing for it; ${fix}, or run without --budget`),
    );
  } else if (data.budget) {
    warn(ctx, path, `${free}: budget.max_usd counts nothing for it; if that is not so, ${fix}`);
  }
}

/** `$0.96`, `$0.0031`: cents when there are any, else the figure as it is. */
function usdText(usd: number): string {
  return usd === 0 || usd >= 0.01 ? `$${usd.toFixed(2)}` : `$${usd}`;
}
