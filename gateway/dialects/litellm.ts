// LiteLLM proxy 1.106.2 (test/gateways/OBSERVED.md): only the OpenAI video protocol and Messages,
// task ids of about 130 characters, the provider's errors wrapped in its own, and FastAPI's own
// answers for what it has no route for.
import type { PriceTable } from '../../jobfile/prices';
import { litellmPrice } from '../../jobfile/pricing';
import { gatewayText } from '../redact';
import { isMap, MAX_ENTRIES } from './amounts';
import type { GatewayDialect, PricesReading, SeenAnswer } from './dialect';

export const LITELLM_MODEL_INFO_PATH = '/v1/model/info';

/**
 * LiteLLM wraps the upstream's error in its own: `litellm.NotFoundError: OpenAIException -
 * {"error":{"message":"The model 'x' does not exist","code":"model_not_found"}}\n\nLiteLLM: model
 * group …`; its Gemini provider as `GeminiException InternalServerError - {"error":{"code":500,
 * "message":…,"status":"INTERNAL"}}` (test/gateways/OBSERVED.md). The upstream's own words and code
 * (Google's `status` name where the code is a number) are what the user needs.
 */
function unwrapMessage(message: string): { message: string; code?: string } | undefined {
  const m = /^litellm\.\w+: \w+(?: \w+)? - (\{[\s\S]*?\})\s*(?:\n\nLiteLLM:|$)/.exec(message);
  if (!m) return undefined;
  try {
    const inner = (JSON.parse(m[1]!) as { error?: { message?: unknown; code?: unknown; status?: unknown } }).error;
    const text = typeof inner?.message === 'string' && inner.message.trim() !== '' ? inner.message : undefined;
    const named = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
    const code = named(inner?.code) ?? named(inner?.status);
    return text === undefined ? undefined : { message: text, code };
  } catch {
    return undefined;
  }
}

/**
 * LiteLLM sets `x-litellm-version` (and `x-litellm-call-id`, `x-litellm-key-spend`, …) on every
 * answer its route handlers give, errors included, and names its exceptions `litellm.<Kind>Error`
 * in error messages. Its FastAPI 404 for a missing route carries neither, so only the answers of
 * routes it has are recognised. Returns the version ('' when unknown), or undefined.
 */
function recognise(answer: SeenAnswer): string | undefined {
  const version = answer.headers['x-litellm-version'];
  if (version !== undefined) return /^[\w.+-]{1,40}$/.test(version) ? version : '';
  if (Object.keys(answer.headers).some((name) => name.startsWith('x-litellm-'))) return '';
  return /"message"\s*:\s*"litellm\.\w+(Error|Exception)\b/.test(answer.text) ? '' : undefined;
}

/** LiteLLM's `{"data": [{"model_name", "model_info": {…cost map entry…}}]}`; undefined when the answer is not that. */
export function fromLiteLLM(doc: unknown, models: ReadonlySet<string>, sourcePrefix: string): PricesReading | undefined {
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

export const litellm: GatewayDialect = {
  name: 'litellm',
  observed: 'litellm[proxy] 1.106.2',
  // The provider's "Video not found", wrapped (a status check of an id it can decode).
  taskNotFound: { codes: [], words: /(video|generation)s?([ _][^.]{0,40}?)?[ _]not[ _](found|exist)/i },
  // "Invalid model name passed in model=…"; "Model id = x not found on litellm proxy".
  modelNotFound: { codes: [], words: /invalid model name|model .* not found/i },
  quotaExhausted: { codes: ['budget_exceeded'], words: /budget has been exceeded/i },
  // FastAPI's `{"detail":"Not Found"}` for a path it has no route for.
  missingRoute: /^not found$/i,
  // Without a database it cannot look up any key but its master key: 400 "No connected db.".
  keyUnreadable: ['no_db_connection'],
  statusWords: { queued: 'pending', in_progress: 'running', completed: 'succeeded', failed: 'failed' },
  // The OpenAI video protocol only: the video is always at the task's content endpoint.
  videoAddress: [],
  contentEndpoint: { honoursRange: false, namesOtherHost: false },
  unwrapMessage,
  recognise,
  // A status check for an id it cannot decode goes to its default provider, OpenAI's public address;
  // naming a provider that does not exist makes it answer from its own code instead (500 "'reelflow-
  // doctor-probe' is not a valid LlmProviders"), so a probe never leaves the proxy.
  probeHeaders: { 'custom-llm-provider': 'reelflow-doctor-probe' },
  // Its answer to every create, USD, from its model cost map.
  billedHeader: 'x-litellm-response-cost',
  publishedPrices: {
    path: LITELLM_MODEL_INFO_PATH,
    withKey: true,
    read: (doc, models, base) => fromLiteLLM(doc, models, `gateway ${base} (${LITELLM_MODEL_INFO_PATH}`),
  },
};
