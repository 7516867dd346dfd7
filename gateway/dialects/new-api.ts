// new-api v0.10.0 (test/gateways/OBSERVED.md): the seed's task protocol, the protocol picked by
// channel, Chinese error messages, and a finished task's video address where v0.10.0 puts it.
import type { ModelPrice, PriceTable } from '../../jobfile/prices';
import { gatewayText } from '../redact';
import { amount, isMap, MAX_ENTRIES } from './amounts';
import type { GatewayDialect, PricesReading } from './dialect';

export const NEW_API_PRICING_PATH = '/api/pricing';
/**
 * new-api's ratio unit: model_ratio 1 is $0.002 per 1K tokens ($2 per million; new-api's
 * `ratio_setting`); completion_ratio multiplies it for output tokens.
 */
const NEW_API_USD_PER_MILLION_AT_RATIO_1 = 2;
/** new-api bills its Sora sizes 1792x1024 and 1024x1792 at this multiple of the per-second price. */
const NEW_API_LARGE_SORA_SIZE_RATIO = 1.666667;

const round = (usd: number): number => Math.round(usd * 1e9) / 1e9;

/** new-api's `{"success": true, "data": [{"model_name", "quota_type", "model_price", "model_ratio", …}], "group_ratio"}`. */
export function fromNewApi(doc: unknown, models: ReadonlySet<string>, source: string): PricesReading | undefined {
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

const asObject = (value: unknown): Record<string, unknown> | undefined => (isMap(value) ? value : undefined);

export const newApi: GatewayDialect = {
  name: 'new-api',
  observed: 'new-api v0.10.0',
  // 400 `{"code":"task_not_exist"}` for a task it does not know, or does not know yet; its content
  // endpoint's 404 "Task not found".
  taskNotFound: { codes: ['task_not_exist'], words: /^task not found$/i },
  // 503 `model_not_found` "分组 default 下模型 x 无可用渠道", older releases "No available channel for model X under group G".
  modelNotFound: { codes: ['model_not_found'], words: /no available channel|model_not_found/i },
  // Its codes and messages for a user's quota, a token's quota and an overdrawn account.
  quotaExhausted: {
    codes: ['insufficient_user_quota', 'pre_consume_token_quota_failed'],
    words: /额度不足|额度已用尽|余额不足|已透支|quota is not enough/i,
  },
  // "Invalid URL (GET /v1/...)" for a path it has no route for.
  missingRoute: /^invalid url \(/i,
  // The task protocol's upper-case words; a Sora task on /v1/videos is a video object with OpenAI's.
  statusWords: {
    not_start: 'pending',
    submitted: 'pending',
    queued: 'pending',
    in_progress: 'running',
    success: 'succeeded',
    completed: 'succeeded',
    failure: 'failed',
    failed: 'failed',
    unknown: 'unknown',
  },
  videoAddress: [
    // v0.10.0 fills `fail_reason` with the address on success (the upstream's file, or its own
    // content endpoint under its ServerAddress); counted only when it is an http(s) address.
    ({ task }) => task.fail_reason,
    // The upstream task it passes through in `data`.
    ({ upstream }) => asObject(upstream?.content)?.video_url,
  ],
  // The upstream Seedance task in `data`: its `content.last_frame_url` when the create asked for it.
  lastFrameAddress: [({ upstream }) => asObject(upstream?.content)?.last_frame_url],
  // Range is not passed upstream; a Sora task's result_url names its ServerAddress setting.
  contentEndpoint: { honoursRange: false, namesOtherHost: true },
  publishedPrices: {
    path: NEW_API_PRICING_PATH,
    // Public: it answers without a key.
    withKey: false,
    read: (doc, models, base) => fromNewApi(doc, models, `gateway ${base} (${NEW_API_PRICING_PATH})`),
  },
};

/** new-api's public status (no key): `{success, data: {version: "v0.10.0", system_name, quota_per_unit, …}}`. */
export const NEW_API_STATUS_PATH = '/api/status';

/**
 * The new-api version an answer of GET /api/status gives, or undefined when the answer is not new-api's.
 * Untrusted: only a version-like string of sane length is taken.
 */
export function newApiVersionOf(body: unknown): string | undefined {
  const data = asObject(asObject(body)?.data);
  const version = data?.version;
  if (!data || typeof version !== 'string' || !/^v?\d+\.\d+\.\d+[\w.+-]{0,30}$/.test(version)) return undefined;
  // The keys new-api's status always has beside the version (an operator may rename system_name).
  if (!('quota_per_unit' in data) && !('system_name' in data)) return undefined;
  return version;
}

/**
 * Whether a new-api release sends its Seedance channel's upstream only the model and the prompt, so
 * frame roles, reference media and return_last_frame never reach Seedance: v0.10.0 does
 * (test/gateways/OBSERVED.md), and so, it is assumed, do the releases before it.
 */
export function newApiDropsSeedanceContent(version: string): boolean {
  const [major = 0, minor = 0, patch = 0] = (/^v?(\d+)\.(\d+)\.(\d+)/.exec(version) ?? []).slice(1).map(Number);
  return major === 0 && (minor < 10 || (minor === 10 && patch === 0));
}
