// The prices a gateway publishes, for the estimate and the budget when the job file and its prices
// files name none (docs/costs.md; what each gateway really answers: test/gateways/OBSERVED.md,
// "Published prices"). Where each gateway publishes them and how its answer is read is its record's
// (gateway/dialects: LiteLLM's `GET /v1/model/info` with the key, new-api's public `GET /api/pricing`);
// here each is asked with one bounded GET per base address. Every byte is the gateway's: bounded in size, read only for the models the job uses, numbers
// checked, and any text shown passes through redact.
import { withPricesBeneath, type PriceTable } from '../jobfile/prices';
import { PUBLISHED_PRICES, type DialectName, type PricesReading, type PublishedPricesSource } from './dialects';
import { sendOnce, type KeyRoute } from './exchange';
import { readText } from './http';
import { withProbeRoute, type KeyUse } from './probe-transport';
import { gatewayText } from './redact';

export { fromLiteLLM, LITELLM_MODEL_INFO_PATH } from './dialects/litellm';
export { fromNewApi, NEW_API_PRICING_PATH } from './dialects/new-api';

/** Each request's bound. */
export const PUBLISHED_PRICES_TIMEOUT_MS = 5_000;
/** LiteLLM's model_info is ~7 KB per deployment: room for a couple of thousand deployments. */
const MAX_ANSWER_BYTES = 16 << 20;

export interface PublishedPrices {
  /** The base address that answered, and how. */
  base?: string;
  gateway?: DialectName;
  /** The asked models it prices, each with its source (`gateway http://… /api/pricing`). */
  prices: PriceTable;
  /** An asked model it lists but reelflow cannot price from what it says, and why. */
  unpriced: Record<string, string>;
  /** Why no address published prices (one line per address); empty when one did. */
  notes: string[];
}

/** The key goes only where a gateway's prices need it (LiteLLM's); absent: only the public ones are read. */
export interface PublishedPricesOptions extends KeyUse {
  timeoutMs?: number;
}

type Reading = PricesReading | { kind: 'none'; said: string };

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
  const readings = await withProbeRoute(timeoutMs, bases, options, (route) =>
    Promise.all(bases.map((base) => readBase(route, base, models, timeoutMs))),
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
 * those models; nothing is read when there are none. `run`, `doctor` (client/estimate.ts) and a worker
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

async function readBase(route: KeyRoute, base: string, models: ReadonlySet<string>, timeoutMs: number): Promise<Reading> {
  // A source that needs the key is not asked where the key may not go: its answer would be a refusal.
  const asked = PUBLISHED_PRICES.map((source) =>
    source.withKey && !keyMayGo(route, base) ? undefined : { source, answer: get(route, base, source, timeoutMs) },
  );
  const answers = await Promise.all(asked.map((a) => a?.answer));
  for (const [i, answer] of answers.entries()) {
    if (answer && 'json' in answer) {
      const read = PUBLISHED_PRICES[i]!.read(answer.json, models, base);
      if (read) return read;
    }
  }
  const said = PUBLISHED_PRICES.map((source, i) => {
    const answer = answers[i];
    return `${source.path} ${answer ? describe(answer) : 'not asked (no key)'}`;
  });
  return { kind: 'none', said: `no published prices (${said.join('; ')})` };
}

const keyMayGo = (route: KeyRoute, base: string): boolean => route.apiKey !== undefined && route.authOrigins.has(new URL(base).origin);

type Answer = { json: unknown; status: number } | { status: number; text: string } | { failed: string };

function describe(answer: Answer): string {
  if ('failed' in answer) return answer.failed;
  if ('json' in answer) return `answered HTTP ${answer.status} with no prices`;
  return `answered HTTP ${answer.status}${answer.text ? `: ${gatewayText(answer.text, 120)}` : ''}`;
}

async function get(route: KeyRoute, base: string, source: PublishedPricesSource, timeoutMs: number): Promise<Answer> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const { response } = await sendOnce(route, new URL(`${base}${source.path}`), {
      operation: 'retrieve',
      method: 'GET',
      credential: source.withKey ? 'bearer' : 'none',
      headers: () => ({ accept: 'application/json' }),
      signal,
    });
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
