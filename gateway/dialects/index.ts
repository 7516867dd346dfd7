// The questions the rest of gateway/ (and the doctor) asks about how gateways speak, answered from
// the records of every gateway the project knows: the seed's service, LiteLLM, new-api. A body is
// read by all of them at once: reelflow does not know in advance which gateway it talks to, and
// the gateways pass their providers' words through.
import type { TaskState } from '../contract';
import type { GatewayDialect, PublishedPricesSource, Saying, SeenAnswer, TaskView } from './dialect';
import { litellm } from './litellm';
import { newApi } from './new-api';
import { seed } from './seed';

export type { DialectName, GatewayDialect, PricesReading, PublishedPricesSource, SeenAnswer, TaskView } from './dialect';

/** Every known gateway, in the order their readings are tried (the seed's fields first). */
export const DIALECTS: readonly GatewayDialect[] = [seed, litellm, newApi];

/** What an error body says, as gateway/classify.ts reads it. */
export interface SaidBody {
  message?: string;
  code?: string;
  type?: string;
}

/** Whether `body` says what `saying` describes: one of its codes (as `code` or `error.type`), or its words. */
export function says(body: SaidBody, saying: Saying): boolean {
  if ([body.code, body.type].some((c) => c !== undefined && saying.codes.includes(c))) return true;
  return saying.words?.test(body.message ?? '') ?? false;
}

const anySays = (pick: (d: GatewayDialect) => Saying | undefined) => (body: SaidBody) =>
  DIALECTS.some((d) => {
    const saying = pick(d);
    return saying !== undefined && says(body, saying);
  });

/** The task id is unknown to the gateway: the one recognizer (retry engine and doctor alike). */
export const isTaskNotFound = anySays((d) => d.taskNotFound);
export const isModelNotFound = anySays((d) => d.modelNotFound);
export const isQuotaExhausted = anySays((d) => d.quotaExhausted);

/** A 404 for the path, not for anything in the request: the gateway has no such route. */
export function isMissingRoute(body: SaidBody): boolean {
  return DIALECTS.some((d) => d.missingRoute?.test(body.message ?? '') ?? false);
}

/** A 400 that is the gateway unable to look up the key: read as the key refused. */
export function isKeyUnreadable(body: SaidBody): boolean {
  return DIALECTS.some((d) => [body.code, body.type].some((c) => c !== undefined && (d.keyUnreadable ?? []).includes(c)));
}

/** The provider's own words and code out of a message a gateway wrapped them in. */
export function unwrapMessage(message: string): { message: string; code?: string } | undefined {
  for (const d of DIALECTS) {
    const inner = d.unwrapMessage?.(message);
    if (inner) return inner;
  }
  return undefined;
}

/** Every status word of every gateway (lower case, `_` for spaces and dashes) and what it means. */
export const STATUS_WORDS: Readonly<Record<string, TaskState>> = Object.assign({}, ...DIALECTS.map((d) => d.statusWords)) as Record<
  string,
  TaskState
>;

/** Where a finished task's video address may be, every gateway's places in order. */
export function videoAddressCandidates(view: TaskView): unknown[] {
  return DIALECTS.flatMap((d) => d.videoAddress.map((at) => at(view)));
}

/** Every place a known gateway puts a finished task's last frame, in order (docs/chains.md). */
export function lastFrameAddressCandidates(view: TaskView): unknown[] {
  return DIALECTS.flatMap((d) => (d.lastFrameAddress ?? []).map((at) => at(view)));
}

/** Which known gateway gave an answer, with its version ('' when unknown); undefined when none says so. */
export function recogniseGateway(answer: SeenAnswer): { dialect: GatewayDialect; version: string } | undefined {
  for (const dialect of DIALECTS) {
    const version = dialect.recognise?.(answer);
    if (version !== undefined) return { dialect, version };
  }
  return undefined;
}

/** Headers a probe carries so that every known gateway answers it from itself. */
export const PROBE_HEADERS: Readonly<Record<string, string>> = Object.assign({}, ...DIALECTS.map((d) => d.probeHeaders ?? {})) as Record<
  string,
  string
>;

/** Response headers that say what a create cost, USD. */
export const BILLED_HEADERS: readonly string[] = DIALECTS.flatMap((d) => (d.billedHeader ? [d.billedHeader] : []));

/** Where gateways publish prices, in the order they are tried. */
export const PUBLISHED_PRICES: readonly (PublishedPricesSource & { gateway: GatewayDialect['name'] })[] = DIALECTS.flatMap((d) =>
  d.publishedPrices ? [{ ...d.publishedPrices, gateway: d.name }] : [],
);

export { litellm, newApi, seed };
