// The prices a gateway publishes, for the estimate and the budget when the job file and its prices
// files name none (docs/costs.md; what each gateway really answers: test/gateways/OBSERVED.md,
// "Published prices"). Two shapes are read, each with one bounded GET per base address:
// - LiteLLM: `GET /v1/model/info` (needs the key): per deployment, its model cost map entry, read
//   like a prices file (jobfile/pricing.ts litellmPrice).
// - new-api: `GET /api/pricing` (no key sent: it answers without one): `model_price` in USD per call
//   (quota_type 1; per second for its OpenAI-video models) or `model_ratio` per token (quota_type 0),
//   times the `default` group's ratio.
// Every byte is the gateway's: bounded in size, read only for the models the job uses, numbers
// checked, and any text shown passes through redact.
import { withPricesBeneath, type ModelPrice, type PriceTable } from '../jobfile/prices';
import { litellmPrice } from '../jobfile/pricing';
import { type HttpTransport, readText } from './http';
import { withProbeTransport } from './probe-transport';
import { gatewayText } from './redact';

export const LITELLM_MODEL_INFO_PATH = '/v1/model/info';
export const NEW_API_PRICING_PATH = '/api/pricing';
/** Each request's bound. */
export const PUBLISHED_PRICES_TIMEOUT_MS = 5_000;
/** LiteLLM's model_info is ~7 KB per deployment: room for a couple of thousand deployments. */
const MAX_ANSWER_BYTES = 16 << 20;
const MAX_ENTRIES = 20_000;
/** No published price above this is believed (USD per second, per video or per call). */
const MAX_USD = 10_000;
/**
 * new-api's ratio unit: model_ratio 1 is $0.002 per 1K tokens ($2 per million; new-api's
 * `ratio_setting`); completion_ratio multiplies it for output tokens.
 */
const NEW_API_USD_PER_MILLION_AT_RATIO_1 = 2;
/** new-api bills its Sora sizes 1792x1024 and 1024x1792 at this multiple of the per-second price (OBSERVED.md). */
const NEW_API_LARGE_SORA_SIZE_RATIO = 1.666667;

export interface PublishedPrices {
  /** The base address that answered, and how. */
  base?: string;
  gateway?: 'litellm' | 'new-api';
  /** The asked models it prices, each with its source (`gateway http://… /api/pricing`). */
  prices: PriceTable;
  /** An asked model it lists but reelflow cannot price from what it says, and why. */
  unpriced: Record<string, string>;
  /** Why no address published prices (one line per address); empty when one did. */
  notes: string[];
}

export interface PublishedPricesOptions {
  /** Sent to LiteLLM's model info only (new-api's pricing is public). Absent: only new-api's is read. */
  key?: string;
  timeoutMs?: number;
}

type Reading =
  { kind: 'prices'; gateway: 'litellm' | 'new-api'; prices: PriceTable; unpriced: Record<string, string> } | { kind: 'none'; said: string };

/**
 * The published prices of `models`: from the first base address (in the order of gateway.base_urls)
 * that publishes any. Never throws: an address that does not answer is a note.
 */
export async function readPublishedPrices(
  bases: readonly string[],
  models: ReadonlySet<string>,
  options: PublishedPricesOptions = {},
): Promise<PublishedPrices> {
  const timeoutMs = options.timeoutMs ?? PUBLISHED_PRICES_TIMEOUT_MS;
  const readings = await withProbeTransport(timeoutMs, options.key, (transport) =>
    Promise.all(bases.map((base) => readBase(transport, base, models, options.key, timeoutMs))),
  );
  const index = readings.findIndex((r) => r.kind === 'prices');
  const found = readings[index];
  if (found?.kind === 'prices')
    return { base: bases[index], gateway: found.gateway, prices: found.prices, unpriced: found.unpriced, notes: [] };
  return { prices: {}, unpriced: {}, notes: readings.map((r, i) => `${bases[i]}: ${r.kind === 'none' ? r.said : ''}`) };
}

/**
 * `own` (the job file's and its prices files' prices) with the gateway's published prices beneath,
 * for the models of `used` it has no price for: the job's own price wins (docs/costs.md). `asked`:
 * those models; nothing is read when there are none. `run`, `doctor` (cli/estimate.ts) and a worker
 * planning a job no `run` priced (activities/plan.ts) price the same way.
 */
export async function withPublishedPrices(
  own: PriceTable | undefined,
  used: Iterable<string>,
  bases: readonly string[],
  options: PublishedPricesOptions = {},
): Promise<{ table: PriceTable; asked: string[]; published: PublishedPrices }> {
  const asked = [...new Set(used)].filter((m) => !Object.prototype.hasOwnProperty.call(own ?? {}, m)).sort();
  if (asked.length === 0) return { table: { ...own }, asked, published: { prices: {}, unpriced: {}, notes: [] } };
  const published = await readPublishedPrices(bases, new Set(asked), options);
  return { table: withPricesBeneath(own, published.prices), asked, published };
}

async function readBase(
  transport: HttpTransport,
  base: string,
  models: ReadonlySet<string>,
  key: string | undefined,
  timeoutMs: number,
): Promise<Reading> {
  const [litellm, newApi] = await Promise.all([
    key ? get(transport, base, LITELLM_MODEL_INFO_PATH, key, timeoutMs) : Promise.resolve(undefined),
    get(transport, base, NEW_API_PRICING_PATH, undefined, timeoutMs),
  ]);
  if (litellm && 'json' in litellm) {
    const read = fromLiteLLM(litellm.json, models, `gateway ${base} (${LITELLM_MODEL_INFO_PATH}`);
    if (read) return read;
  }
  if ('json' in newApi) {
    const read = fromNewApi(newApi.json, models, `gateway ${base} (${NEW_API_PRICING_PATH})`);
    if (read) return read;
  }
  const said = [litellm ? `${LITELLM_MODEL_INFO_PATH} ${describe(litellm)}` : `${LITELLM_MODEL_INFO_PATH} not asked (no key)`];
  said.push(`${NEW_API_PRICING_PATH} ${describe(newApi)}`);
  return { kind: 'none', said: `no published prices (${said.join('; ')})` };
}

type Answer = { json: unknown; status: number } | { status: number; text: string } | { failed: string };

function describe(answer: Answer): string {
  if ('failed' in answer) return answer.failed;
  if ('json' in answer) return `answered HTTP ${answer.status} with no prices`;
  return `answered HTTP ${answer.status}${answer.text ? `: ${gatewayText(answer.text, 120)}` : ''}`;
}

async function get(transport: HttpTransport, base: string, path: string, key: string | undefined, timeoutMs: number): Promise<Answer> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const headers: Record<string, string> = { accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) };
    const response = await transport.send({ url: new URL(`${base}${path}`), method: 'GET', headers, signal }, base);
    const text = await readText(response.body, MAX_ANSWER_BYTES);
    if (response.status !== 200) return { status: response.status, text };
    try {
      return { status: response.status, json: JSON.parse(text) as unknown };
    } catch {
      return { status: response.status, text: text.length >= MAX_ANSWER_BYTES ? `more than ${MAX_ANSWER_BYTES} bytes` : 'not JSON' };
    }
  } catch (error) {
    return { failed: signal.aborted ? `no answer within ${timeoutMs / 1000} s` : gatewayText((error as Error).message, 160) };
  }
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A published amount: a finite number from 0 to MAX_USD, else undefined. */
function amount(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_USD ? v : undefined;
}

/** LiteLLM's `{"data": [{"model_name", "model_info": {…cost map entry…}}]}`; undefined when the answer is not that. */
export function fromLiteLLM(doc: unknown, models: ReadonlySet<string>, sourcePrefix: string): Reading | undefined {
  const data = isMap(doc) ? doc.data : undefined;
  if (!Array.isArray(data)) return undefined;
  const prices: PriceTable = {};
  const unpriced: Record<string, string> = {};
  let recognised = false;
  for (const entry of data.slice(0, MAX_ENTRIES)) {
    if (!isMap(entry) || typeof entry.model_name !== 'string' || !isMap(entry.model_info)) continue;
    recognised = true;
    const model = entry.model_name;
    if (!models.has(model) || prices[model]) continue;
    const info = entry.model_info;
    // The cost map's key names the source on a terminal line: a plain name only (no escape, no space).
    const mapKey = typeof info.key === 'string' && /^[\w./:@+-]{1,200}$/.test(info.key) ? gatewayText(info.key, 200) : model;
    const refused: string[] = [];
    const price = litellmPrice(info, `${sourcePrefix}, ${mapKey})`, (field) => refused.push(field));
    if (price) {
      prices[model] = price;
      delete unpriced[model];
    } else
      unpriced[model] = refused.length
        ? `the gateway's price for ${model} is not a number 0 or more (${refused.join(', ')})`
        : `the gateway lists ${model} without a price`;
  }
  return recognised ? { kind: 'prices', gateway: 'litellm', prices, unpriced } : undefined;
}

/** new-api's `{"success": true, "data": [{"model_name", "quota_type", "model_price", "model_ratio", …}], "group_ratio"}`. */
export function fromNewApi(doc: unknown, models: ReadonlySet<string>, source: string): Reading | undefined {
  if (!isMap(doc) || doc.success !== true || !Array.isArray(doc.data)) return undefined;
  // A key's group is not published to it; new-api's users are in `default` unless the operator moved them.
  const groupRatio = isMap(doc.group_ratio) ? amount(doc.group_ratio.default) : undefined;
  const ratio = groupRatio ?? 1;
  const sourced = ratio === 1 ? source : `${source.slice(0, -1)}, × group ratio ${ratio})`;
  const prices: PriceTable = {};
  const unpriced: Record<string, string> = {};
  for (const entry of doc.data.slice(0, MAX_ENTRIES)) {
    if (!isMap(entry) || typeof entry.model_name !== 'string' || !models.has(entry.model_name)) continue;
    const model = entry.model_name;
    const price = newApiPrice(entry, ratio, sourced);
    if (typeof price === 'string') unpriced[model] = price;
    else prices[model] = price;
  }
  return { kind: 'prices', gateway: 'new-api', prices, unpriced };
}

function newApiPrice(entry: Record<string, unknown>, groupRatio: number, source: string): ModelPrice | string {
  const model = String(entry.model_name);
  const endpoints = Array.isArray(entry.supported_endpoint_types) ? entry.supported_endpoint_types : [];
  if (entry.quota_type === 1) {
    const perCall = amount(entry.model_price);
    if (perCall === undefined) return `the gateway's price for ${model} is not a number 0 or more`;
    const usd = perCall * groupRatio;
    // Its OpenAI-video channel (Sora) multiplies the price by the seconds, and by 1.666667 at the large sizes.
    if (endpoints.includes('openai-video')) {
      return { source, perSecond: usd, perSecondByResolution: { '1024p': round(usd * NEW_API_LARGE_SORA_SIZE_RATIO) }, defaultSeconds: 4 };
    }
    // Other task models pay per call whatever the length; a Messages model too (perCall).
    return { source, perVideo: usd, perCall: usd };
  }
  if (entry.quota_type === 0) {
    const modelRatio = amount(entry.model_ratio);
    const completion = amount(entry.completion_ratio) ?? 1;
    if (modelRatio === undefined) return `the gateway's ratio for ${model} is not a number 0 or more`;
    const input = modelRatio * NEW_API_USD_PER_MILLION_AT_RATIO_1 * groupRatio;
    return { source, perMillionInputTokens: round(input), perMillionOutputTokens: round(input * completion) };
  }
  return `the gateway prices ${model} in a way reelflow does not read (quota_type ${gatewayText(String(entry.quota_type), 20)})`;
}

function round(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}
