// The preflight's one look at the gateway (docs/preflight.md): GET /v1/models on every base
// address, which says at once whether an address answers, whether it takes the key, and, where the
// gateway publishes a catalog (LiteLLM and new-api do, filtered by the key's token group), which
// models the key may use. It costs nothing and creates nothing. `run`, `doctor` and a worker before
// its first create all read it here and say the same words.
import type { ModelSite, Plan } from '../jobfile/plan';
import { editDistance } from '../jobfile/text';
import { classifyGatewayError, parseErrorBody } from './classify';
import { AuthError, GatewayAbortedError, GatewayUnavailableError } from './errors';
import { sendOnce, type KeyRoute } from './exchange';
import { readText } from './http';
import { withProbeRoute, type KeyUse } from './probe-transport';
import { gatewayText } from './redact';

export const CATALOG_PATH = '/v1/models';
/** Each request's bound: a silent address costs this much, once. */
export const CATALOG_TIMEOUT_MS = 5_000;
/**
 * Tries per address for a passing trouble (a refused or reset connection, 429, 5xx), within the
 * time bound: a gateway that fails one call in four still answers the preflight 999 times in 1000.
 */
const TRIES = 5;
const RETRY_WAITS_MS = [250, 500, 1000, 1500];
/** A catalog larger than this is not read (a real one with a thousand models is ~200 KB). */
const MAX_CATALOG_BYTES = 4 << 20;
const MAX_MODELS = 20_000;
const MAX_ID_LENGTH = 256;
/** How many catalog names a message suggests for a model it lacks. */
const SUGGESTIONS = 3;

/** What one base address said to GET /v1/models. */
export type BaseReading =
  | { base: string; kind: 'catalog'; models: ReadonlySet<string> }
  /** It answers, but publishes no catalog here (404, a web page, no list): not an error. */
  | { base: string; kind: 'no-catalog'; said: string }
  | { base: string; kind: 'key-refused'; said: string }
  | { base: string; kind: 'unreachable'; why: string };

export interface CatalogReport {
  readings: BaseReading[];
  /** The first address's catalog, in the order of gateway.base_urls; absent: none publishes one. */
  catalog?: { base: string; models: ReadonlySet<string> };
}

/** `key` absent: the request goes without one (the catalog then is not read, only reachability). */
export interface CatalogOptions extends KeyUse {
  timeoutMs?: number;
  /** Requests per address at most (default 5): 1 for a quick look that tries nothing again. */
  tries?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// eslint-disable-next-line no-control-regex -- control characters are what is removed
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text a gateway wrote, as a message may show it: redacted, one line, bounded, and inert (no
 * control character or escape that could rewrite a terminal: these messages end as an error line).
 */
const shown = (text: string, max = 200): string => gatewayText(text.replace(CONTROL, ' '), max);

/** Reads every base address at once; one bounded request each (a few for passing trouble). */
export async function readCatalogs(bases: readonly string[], options: CatalogOptions = {}): Promise<CatalogReport> {
  const timeoutMs = options.timeoutMs ?? CATALOG_TIMEOUT_MS;
  const readings = await withProbeRoute(timeoutMs, bases, options, (route) =>
    Promise.all(bases.map((base) => readBase(route, base, timeoutMs, options.tries ?? TRIES))),
  );
  const first = readings.find((r) => r.kind === 'catalog');
  return { readings, ...(first ? { catalog: { base: first.base, models: first.models } } : {}) };
}

async function readBase(route: KeyRoute, base: string, timeoutMs: number, tries: number): Promise<BaseReading> {
  const deadline = Date.now() + 2 * timeoutMs;
  let reading: BaseReading & { passing?: boolean };
  for (let attempt = 0; ; attempt++) {
    reading = await readOnce(route, base, timeoutMs);
    const wait = RETRY_WAITS_MS[attempt];
    if (!reading.passing || attempt + 1 >= tries || wait === undefined || Date.now() + wait + timeoutMs > deadline) break;
    await sleep(wait);
  }
  const { passing: _p, ...out } = reading;
  return out as BaseReading;
}

/** `HTTP 404: Not Found`: the status and the gateway's own words, redacted, on one line, bounded. */
function said(status: number, text: string): string {
  const body = parseErrorBody(text);
  const words = body.message ? `: ${shown(body.message)}` : body.shape === 'html' ? ' (a web page)' : '';
  return `HTTP ${status}${words}`;
}

async function readOnce(route: KeyRoute, base: string, timeoutMs: number): Promise<BaseReading & { passing?: boolean }> {
  const signal = AbortSignal.timeout(timeoutMs);
  let status: number;
  let text: string;
  let keySent: boolean;
  try {
    const url = new URL(`${base}${CATALOG_PATH}`);
    const headers = () => ({ accept: 'application/json' });
    const { response, ...sent } = await sendOnce(route, url, {
      operation: 'retrieve',
      method: 'GET',
      credential: 'bearer',
      headers,
      signal,
    });
    keySent = sent.keySent;
    status = response.status;
    text = await readText(response.body, MAX_CATALOG_BYTES);
  } catch (error) {
    if (signal.aborted || error instanceof GatewayAbortedError) {
      return { base, kind: 'unreachable', why: `no answer within ${timeoutMs / 1000} s` };
    }
    const why = error instanceof GatewayUnavailableError ? networkWhy(error.message, base) : shown(String(error));
    return { base, kind: 'unreachable', why, passing: true };
  }
  // Without a key any answer shows the address is up (LiteLLM answers a keyless request 500).
  if (!keySent) return { base, kind: 'no-catalog', said: `${said(status, text)} (no key sent)` };
  if (status === 429) return { base, kind: 'no-catalog', said: said(status, text), passing: true };
  if (status >= 500) return { base, kind: 'unreachable', why: `answered ${said(status, text)}`, passing: true };
  if (classifyGatewayError({ status, body: text, operation: 'retrieve', baseUrl: base }) instanceof AuthError) {
    return { base, kind: 'key-refused', said: said(status, text) };
  }
  if (status !== 200) return { base, kind: 'no-catalog', said: said(status, text) };
  const models = modelIds(text);
  if (!models) {
    const what = parseErrorBody(text).shape === 'html' ? 'a web page' : 'no list of models';
    return { base, kind: 'no-catalog', said: `HTTP 200 with ${what}` };
  }
  return { base, kind: 'catalog', models };
}

/** `connection refused (ECONNREFUSED)` out of the transport's `<base>: connection refused (ECONNREFUSED) before the request was sent`. */
function networkWhy(message: string, base: string): string {
  const rest = message.startsWith(`${base}: `) ? message.slice(base.length + 2) : message;
  return shown(rest.replace(/ (before|after) the request was sent$/, ''));
}

/** The ids of an OpenAI-style list (`{"data":[{"id":…}]}`); undefined when the body is not one, or lists nothing. */
export function modelIds(text: string): Set<string> | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  const ids = new Set<string>();
  for (const entry of data.slice(0, MAX_MODELS)) {
    const id = (entry as { id?: unknown } | null)?.id;
    if (typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_LENGTH) ids.add(id);
  }
  // An empty list proves nothing about a name: the create would be the judge, as without a catalog.
  return ids.size > 0 ? ids : undefined;
}

/**
 * Catalog names nearest to `model`, nearest first: by edit distance, a name that starts like the
 * model (a dated suffix such as `-250528` added) counting as close.
 */
export function closestModels(model: string, catalog: Iterable<string>, count = SUGGESTIONS): string[] {
  const wanted = model.toLowerCase();
  const scored = [...catalog].map((name) => {
    const lower = name.toLowerCase();
    const whole = editDistance(wanted, lower);
    const prefix = editDistance(wanted, lower.slice(0, wanted.length)) + 1;
    return { name, score: Math.min(whole, prefix) };
  });
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : 1));
  return scored.slice(0, count).map((s) => s.name);
}

/**
 * Whether the catalog lists `model`: by name, or by a wildcard entry (LiteLLM lists a wildcard
 * route such as `openai/*` as it is configured; any name it matches is served).
 */
export function listed(model: string, catalog: ReadonlySet<string>): boolean {
  if (catalog.has(model)) return true;
  for (const id of catalog) {
    if (!id.includes('*')) continue;
    const pattern = new RegExp(
      `^${id
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    if (pattern.test(model)) return true;
  }
  return false;
}

/** One model a job uses: its role and where the job file names it. */
export interface ModelUse {
  model: string;
  role: 'video' | 'enhance';
  sites: readonly ModelSite[];
}

/** The models a job uses: its items' (first use first), then enhance.model when it enhances. */
export function modelUses(plan: Pick<Plan, 'items' | 'enhance' | 'modelSites'>): ModelUse[] {
  const sitesOf = (model: string, enhance: boolean) =>
    (plan.modelSites ?? []).filter((s) => s.model === model && (s.where === 'enhance.model') === enhance);
  const uses: ModelUse[] = [];
  const seen = new Set<string>();
  for (const { request } of plan.items) {
    if (seen.has(request.model)) continue;
    seen.add(request.model);
    uses.push({ model: request.model, role: 'video', sites: sitesOf(request.model, false) });
  }
  if (plan.enhance) uses.push({ model: plan.enhance.model, role: 'enhance', sites: sitesOf(plan.enhance.model, true) });
  return uses;
}

/** One reason a run may not start: what it is about (`gateway`, `key`, `model sora-3`) and the sentence. */
export interface PreflightProblem {
  about: string;
  message: string;
}

/** What the preflight concludes; `problems` is empty when a run may start. */
export interface PreflightVerdict {
  /** 0 go on, 2 the job or the key must change, 3 no address answers. */
  exit: 0 | 2 | 3;
  problems: PreflightProblem[];
  /** What was checked, in words, when a run may start. */
  checked: string;
}

/** The problems as one message (the error `run` exits with). */
export const verdictMessage = (verdict: PreflightVerdict): string => verdict.problems.map((p) => p.message).join('\n');

/** The sentence for a model the catalog lacks: the model, where the job sets it, the closest names. */
export function missingModelMessage(use: ModelUse, catalog: { base: string; models: ReadonlySet<string> }): string {
  const where = use.sites.length > 0 ? `; set at ${use.sites.map((s) => `${s.at} (${s.where})`).join(', ')}` : '';
  const closest = closestModels(use.model, catalog.models).map((name) => shown(name, 120));
  const role = use.role === 'enhance' ? 'enhance model' : 'model';
  return (
    `${role} "${use.model}" is not in the gateway's catalog for this key (GET ${CATALOG_PATH} on ${catalog.base} lists ` +
    `${catalog.models.size} model${catalog.models.size === 1 ? '' : 's'})${where}` +
    (closest.length > 0 ? `; closest in the catalog: ${closest.join(', ')}` : '') +
    ". Fix the name in the job file, or have the gateway give the key's token group this model"
  );
}

/** Every address and why it did not answer, in the order of gateway.base_urls. */
export function unreachableMessage(readings: readonly BaseReading[]): string {
  const each = readings.map((r) => `${r.base}: ${r.kind === 'unreachable' ? r.why : 'answered'}`);
  return `no gateway address answers: ${each.join('; ')}. Start the gateway or fix gateway.base_urls; ` + 'nothing was started';
}

/**
 * The one judgement `run`, `doctor` and a worker share: some address must answer (else exit 3),
 * the key must not be refused where it was sent (else 2), and where a catalog is published every
 * model the job uses must be in it (else 2).
 */
export function judgeCatalog(report: CatalogReport, uses: readonly ModelUse[], keyEnv: string): PreflightVerdict {
  const answered = report.readings.filter((r) => r.kind !== 'unreachable');
  if (answered.length === 0)
    return { exit: 3, problems: [{ about: 'gateway', message: unreachableMessage(report.readings) }], checked: '' };
  if (answered.every((r) => r.kind === 'key-refused')) {
    const first = answered[0] as Extract<BaseReading, { kind: 'key-refused' }>;
    return {
      exit: 2,
      problems: [
        {
          about: 'key',
          message:
            `the gateway refused the key in ${keyEnv} (GET ${CATALOG_PATH} on ${first.base}: ${first.said}): ` +
            `put a current key from the gateway's console into ${keyEnv}; nothing was started`,
        },
      ],
      checked: '',
    };
  }
  const { catalog } = report;
  if (!catalog) {
    const heard = answered.map((r) => `${r.base}: ${r.kind === 'no-catalog' ? r.said : 'key refused'}`).join('; ');
    return { exit: 0, problems: [], checked: `no catalog published (GET ${CATALOG_PATH}: ${heard}); model names not checked` };
  }
  const missing = uses.filter((u) => !listed(u.model, catalog.models));
  if (missing.length > 0) {
    const problems = missing.map((u) => ({
      about: `${u.role === 'enhance' ? 'enhance ' : ''}model ${u.model}`,
      message: missingModelMessage(u, catalog),
    }));
    return { exit: 2, problems, checked: '' };
  }
  return {
    exit: 0,
    problems: [],
    checked: `${uses.map((u) => u.model).join(', ')} in the catalog of ${catalog.base} (${catalog.models.size} models listed for this key)`,
  };
}
