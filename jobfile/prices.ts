// What an item costs before anything is sent: prices per model, and the arithmetic over a request.
// Pure (no Node module, no clock), so the same function can price a create wherever it is needed,
// the job workflow's budget included. The user's view: docs/costs.md.
import { roundUsd } from '../domain/money';
import type { EnhanceSettings, Protocol, RenderRequest } from './plan';

/**
 * The price of one model, in USD. A video model has `perVideo`, or `perSecond` and/or
 * `perSecondByResolution`; a Messages model (the enhance model) has both token prices.
 */
export interface ModelPrice {
  /** Where the price came from, for the estimate: `job file`, `prices.json (gemini/veo-3.1-fast-generate-001)`. */
  source: string;
  perVideo?: number;
  /** Any resolution; with `perSecondByResolution`, the resolutions it does not list. */
  perSecond?: number;
  /** By resolution label (`720p`, `1080p`, `2160p`; see resolutionLabel). */
  perSecondByResolution?: Record<string, number>;
  perMillionInputTokens?: number;
  perMillionOutputTokens?: number;
  /** A Messages model priced per call whatever its tokens (new-api's per-call prices: gateway/published-prices.ts). */
  perCall?: number;
  /** The model's length when a request sets no seconds; else the protocol's (DEFAULT_SECONDS). */
  defaultSeconds?: number;
}

/** Prices by model name, exactly as the gateway's catalog names the model. */
export type PriceTable = Record<string, ModelPrice>;

/**
 * The length assumed when a request sends no `seconds` and its price names none: OpenAI's videos
 * API renders 4 s by default; the general protocol's models (Seedance and the like) 5 s. An
 * assumption, and the estimate says so.
 */
export const DEFAULT_SECONDS: Record<Protocol, number> = { openai: 4, general: 5 };

/** Resolution names that are not `<lines>p`: what they mean in lines (LiteLLM's `_2k`, `_4k` keys). */
const NAMED_RESOLUTIONS: Record<string, string> = { '2k': '1440p', '4k': '2160p' };
const LINES_RE = /^[1-9][0-9]{1,4}p$/;

/**
 * A resolution as reelflow compares it: `<lines>p` in lower case; `2k` is 1440p and `4k` 2160p.
 * Undefined for anything else (`hd`, `1080`, `1280x720`).
 */
export function resolutionLabel(text: string): string | undefined {
  const t = text.trim().toLowerCase();
  const named = NAMED_RESOLUTIONS[t];
  if (named) return named;
  return LINES_RE.test(t) ? t : undefined;
}

/** An openai `size` as a resolution: its shorter side in lines (1280x720 and 720x1280 are 720p; 1792x1024 is 1024p). */
export function resolutionOfSize(size: string): string | undefined {
  const m = /^([1-9][0-9]*)x([1-9][0-9]*)$/.exec(size.trim());
  if (!m) return undefined;
  return `${Math.min(Number(m[1]), Number(m[2]))}p`;
}

/** The resolution a request renders at, when it says: general `resolution`, openai `size`. */
export function resolutionOf(request: Pick<RenderRequest, 'protocol' | 'resolution' | 'size'>): string | undefined {
  if (request.protocol === 'openai') return request.size === undefined ? undefined : resolutionOfSize(request.size);
  return request.resolution === undefined ? undefined : resolutionLabel(request.resolution);
}

export type Estimate =
  | {
      usd: number;
      source: string;
      /** Set when the request sent no seconds and this length was assumed. */
      assumedSeconds?: number;
    }
  | { unpriced: string };

function listed(byResolution: Record<string, number>): string {
  return Object.keys(byResolution).join(', ');
}

/**
 * The price of one create: per video, or per second times its length (`seconds`, else the model's
 * or protocol's default, reported as assumed). Never zero for a model without a price: it is
 * `unpriced`, with why.
 */
export function estimateItemUsd(
  table: PriceTable,
  request: Pick<RenderRequest, 'model' | 'protocol' | 'seconds' | 'resolution' | 'size'>,
): Estimate {
  const price = Object.prototype.hasOwnProperty.call(table, request.model) ? table[request.model] : undefined;
  if (!price) return { unpriced: `no price for ${request.model}` };
  if (price.perVideo !== undefined) return { usd: price.perVideo, source: price.source };
  const resolution = resolutionOf(request);
  let perSecond = price.perSecond;
  const byResolution = price.perSecondByResolution;
  if (byResolution && resolution !== undefined && byResolution[resolution] !== undefined) perSecond = byResolution[resolution];
  if (perSecond === undefined) {
    if (!byResolution) return { unpriced: `${request.model} has no per-video or per-second price` };
    if (resolution === undefined) {
      return {
        unpriced: `${request.model} is priced by resolution (${listed(byResolution)}) and the item sets none (${request.protocol === 'openai' ? 'size' : 'resolution'})`,
      };
    }
    return { unpriced: `${request.model} has no price for ${resolution} (priced: ${listed(byResolution)})` };
  }
  const given = request.seconds === undefined ? undefined : Number(request.seconds);
  const seconds = given ?? price.defaultSeconds ?? DEFAULT_SECONDS[request.protocol];
  return {
    usd: roundUsd(perSecond * seconds),
    source: price.source,
    ...(given === undefined ? { assumedSeconds: seconds } : {}),
  };
}

/**
 * Input tokens assumed for a rewrite: one per 3 bytes of system text and prompt (English averages
 * nearer 4), so the estimate errs high; output tokens: max_tokens, the most the call may bill.
 */
export function enhanceTokens(enhance: Pick<EnhanceSettings, 'maxTokens' | 'system'>, prompt: string): { input: number; output: number } {
  const bytes = new TextEncoder().encode(`${enhance.system ?? ''}${prompt}`).length;
  return { input: Math.ceil(bytes / 3), output: enhance.maxTokens };
}

/** The price of one prompt rewrite through Messages (an upper bound: see enhanceTokens). */
export function estimateEnhanceUsd(
  table: PriceTable,
  enhance: Pick<EnhanceSettings, 'model' | 'maxTokens' | 'system'>,
  prompt: string,
): Estimate {
  const price = Object.prototype.hasOwnProperty.call(table, enhance.model) ? table[enhance.model] : undefined;
  if (!price) return { unpriced: `no price for ${enhance.model}` };
  if (price.perCall !== undefined && price.perMillionInputTokens === undefined) return { usd: price.perCall, source: price.source };
  if (price.perMillionInputTokens === undefined || price.perMillionOutputTokens === undefined) {
    return { unpriced: `${enhance.model} rewrites prompts (enhance) but has no per-token prices` };
  }
  const tokens = enhanceTokens(enhance, prompt);
  const usd = (tokens.input * price.perMillionInputTokens + tokens.output * price.perMillionOutputTokens) / 1e6;
  return { usd: roundUsd(usd), source: price.source };
}

/**
 * What the enhance activity prices an answered rewrite with: the enhance model's token prices (or
 * its per-call price). A page of the plan hands it to the item (activities/plan.ts), small enough to
 * travel with every item; the `source` stays with the estimate.
 */
export type RewritePrice = Pick<ModelPrice, 'perMillionInputTokens' | 'perMillionOutputTokens' | 'perCall'>;

/** The enhance model's RewritePrice in `table`; undefined when it has neither token nor per-call prices. */
export function rewritePriceOf(table: PriceTable, model: string): RewritePrice | undefined {
  const price = Object.prototype.hasOwnProperty.call(table, model) ? table[model] : undefined;
  if (!price) return undefined;
  const { perMillionInputTokens, perMillionOutputTokens, perCall } = price;
  const out: RewritePrice = {
    ...(perMillionInputTokens !== undefined ? { perMillionInputTokens } : {}),
    ...(perMillionOutputTokens !== undefined ? { perMillionOutputTokens } : {}),
    ...(perCall !== undefined ? { perCall } : {}),
  };
  return Object.keys(out).length > 0 ? out : undefined;
}

/** What a Messages answer says it used (gateway/messages.ts): a gateway's numbers, believed only when sane. */
export interface MessagesUsage {
  inputTokens?: number;
  outputTokens?: number;
}

/**
 * Input tokens no prompt rewrite reaches (the largest context windows hold 1 to 2 million): an
 * answer claiming more is not believed, and the estimate stands.
 */
export const MAX_REWRITE_INPUT_TOKENS = 2_000_000;

/** Where a rewrite's cost came from: the answer's token usage at the model's prices, or the estimate. */
export type RewriteCostSource = 'usage' | 'estimated';

export interface RewriteCost {
  usd: number;
  source: RewriteCostSource;
}

const isTokenCount = (v: unknown, most: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= most;

/**
 * The answer's token counts when both are whole, not negative and possible: input within
 * MAX_REWRITE_INPUT_TOKENS, output within max_tokens (the most the call may produce). Else undefined.
 */
export function believableUsage(usage: MessagesUsage | undefined, maxTokens: number): { input: number; output: number } | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const { inputTokens, outputTokens } = usage;
  if (!isTokenCount(inputTokens, MAX_REWRITE_INPUT_TOKENS) || !isTokenCount(outputTokens, maxTokens)) return undefined;
  return { input: inputTokens, output: outputTokens };
}

/**
 * What an answered rewrite cost (docs/costs.md): its usage at the model's per-token prices
 * (`usage`); when the answer carried no believable usage, or the model is priced per call, the
 * estimate (`estimated`: estimateEnhanceUsd). Undefined: the model has no price.
 */
export function rewriteCostUsd(
  price: RewritePrice | undefined,
  enhance: Pick<EnhanceSettings, 'model' | 'maxTokens' | 'system'>,
  prompt: string,
  usage: MessagesUsage | undefined,
): RewriteCost | undefined {
  if (!price) return undefined;
  const { perMillionInputTokens: perInput, perMillionOutputTokens: perOutput } = price;
  if (perInput !== undefined && perOutput !== undefined) {
    const tokens = believableUsage(usage, enhance.maxTokens);
    if (tokens) return { usd: roundUsd((tokens.input * perInput + tokens.output * perOutput) / 1e6), source: 'usage' };
  }
  const estimate = estimateEnhanceUsd({ [enhance.model]: { source: '', ...price } }, enhance, prompt);
  return 'usd' in estimate ? { usd: estimate.usd, source: 'estimated' } : undefined;
}

/**
 * `table` with the prices of `beneath` added for the models it has no price for: the job file's and
 * the prices files' prices win over the gateway's (docs/costs.md).
 */
export function withPricesBeneath(table: PriceTable | undefined, beneath: PriceTable): PriceTable {
  const out: PriceTable = { ...table };
  for (const [model, price] of Object.entries(beneath)) if (!Object.prototype.hasOwnProperty.call(out, model)) out[model] = price;
  return out;
}
