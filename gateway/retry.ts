// The one retry engine of gateway/ (docs/protocol.md §6). Every request the client makes is one
// `call`: creates, status checks, messages, each opening of a video (first and after a cut) and
// remote reference images. A call is a loop of attempts. Each attempt asks the call where to go
// (a path under whichever base is healthy now, or a fixed address), sends one request through
// `exchange` (gateway/exchange.ts, the one place that follows redirects and decides whether the
// key goes along), and judges the answer. Reads fail over freely; a create is sent again only
// when the last one was provably not processed (or always, if the job allows it); 429 waits and
// retries on the same base without counting as a base failure.
//
// The budget of one call, with the client's defaults (N base addresses, T the request timeout).
// budget.ts holds these numbers and computes them (callBudget); the client and the workflows'
// activity timeouts take them from there:
//   requests  a call ends at its maxAttempts-th failed attempt (5xx, network, unreadable answer;
//             default max(6, 2N + 2)) or its (maxRateLimitRetries + 1)-th 429 (default 8 + 1), so
//             it sends at most maxAttempts + maxRateLimitRetries requests: 14 for N <= 2, 16 for
//             N = 3. Following a redirect (downloads, references: at most 5) is part of its attempt.
//   time      no wait runs past the deadline (default 120 s) and no attempt starts after it, so a
//             call lasts at most the deadline plus one attempt. An attempt's whole exchange
//             (connecting, sending, the answer read) has a deadline of 2T, and a create's also its
//             body's bytes at 1 MB/s (budget.ts UPLOAD_FLOOR_BYTES_PER_SECOND).
// Per kind of call, worst case (T = 30 s, the default: 2T = 60 s):
//   create        `safe`: one request that may have reached a gateway; another only after a failure
//                 that proves nothing was processed (connection refused, 429, 503 + Retry-After).
//                 `always`: up to maxAttempts creates that may each have been processed. An openai
//                 create with a remote reference image first makes a reference call per attempt.
//                 Time: 120 s + 2T + body / 1 MB/s (180 s, plus 1 s per MB of body), and for a
//                 remote reference first its fetch, 120 s + 10 s + T (another 160 s).
//   status check, messages: the whole budget, failing over between bases. Time: 120 s + 2T (180 s).
//   download      each opening of the video is one call; once per download it may also restart
//                 from byte 0 (416) and ask the task for a fresh address (one status check call).
//                 The body reopens (one more call) after each of up to downloadResumeAttempts
//                 (default 5) cuts. Its body has no deadline: its activity's heartbeat watches it.
//   reference     GET of a remote reference image, never with the key: network failures are
//                 retried within the budget, an HTTP error is final. Time: 120 s + 10 s + T to its
//                 headers; its body streams into the create's.
// Temporal multiplies all of this by the maximumAttempts of the activity (workflows/activities.ts):
// a status check activity with 3 attempts may send 3 x 14 requests. Each activity's
// startToCloseTimeout is its call's budget for the job (computed when the job is planned, the
// create's from the largest body the job may send) plus the worker's own part, so Temporal never
// cuts the engine short.
import { deadline } from './deadline';
import { setTimeout as delay } from 'node:timers/promises';
import { backoffDelay } from './backoff';
import { classifyGatewayError, describeError, parseErrorBody, type GatewayOperation } from './classify';
import type { GatewayLog } from './contract';
import { AmbiguousCreateError, GatewayAbortedError, GatewayError, GatewayUnavailableError, RateLimitedError } from './errors';
import { exchange, servedBy, unusable, type Answered, type Credential, type KeyRoute, type PreparedBody } from './exchange';
import { discard, networkError, readText, sourceOf, type HttpResponse } from './http';
import type { BaseUrlPool } from './pool';

export type { Answered, PreparedBody } from './exchange';

export interface CallLimits {
  /** Failed attempts per call (5xx, network, unreadable answers) before giving up. */
  maxAttempts: number;
  /** Wall time of a call, ms: no wait runs past it and no attempt starts after it. */
  deadlineMs: number;
  /** 429 answers per call that are waited out and retried. */
  maxRateLimitRetries: number;
  /** Cap on one Retry-After or backoff wait, ms. */
  maxWaitMs: number;
}

/** What all calls of one client share. */
export interface Engine extends KeyRoute {
  pool: BaseUrlPool;
  apiKey: string;
  /** The variable the key came from (never the key), for the 401 message. */
  apiKeyEnv?: string;
  createRetries: 'safe' | 'always';
  limits: CallLimits;
  now: () => number;
  random: () => number;
  log: GatewayLog;
}

/** Where an attempt goes: a path under whichever base is healthy now (fails over), or a fixed address. */
export type Target = { path: string } | { url: string };

export interface CallSpec<T> {
  operation: GatewayOperation;
  method: 'GET' | 'POST';
  /** Asked before every attempt, so a call can move (a refreshed video address). */
  target: () => Target;
  /** The header that carries the key, sent only to base-address origins. */
  credential: Credential;
  /** Other headers, asked before every attempt (a download's Range moves). */
  headers?: () => Record<string, string>;
  /** A fresh body for every attempt (streams cannot be replayed). If it fails, nothing was sent. */
  openBody?: () => Promise<PreparedBody>;
  followRedirects?: boolean;
  /**
   * A deadline for one attempt's whole exchange, answer body included, ms. undici's timeouts reset
   * on every byte, so without it a gateway that trickles a byte a second holds the call for ever.
   * Not for downloads, whose bodies are long: their activity's heartbeat watches them. A function
   * gets the attempt's body (a create's deadline grows with its size: budget.ts).
   */
  exchangeTimeoutMs?: number | ((body: PreparedBody | undefined) => number);
  model?: string;
  taskId?: string;
  signal?: AbortSignal;
  /** Turns a 2xx answer into the result; throw GatewayUnavailableError when it is unreadable. */
  accept(response: HttpResponse, at: Answered): Promise<T>;
  /**
   * Sees an error status before it is classified (the body is already read). Returns 'again' to
   * send at once, not counted, after changing what `target` or `headers` give; may throw the error
   * that ends the call.
   */
  reject?(status: number, at: Answered): Promise<'again' | undefined>;
}

export interface CallResult<T> {
  value: T;
  /** The base address that answered; for a fixed address (a result_url), that address's origin. */
  baseUrl: string;
  /** Requests sent, including 429-refused and provably unsent ones. */
  attempts: number;
}

const AGAIN = Symbol('again');

async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0) return;
  try {
    await delay(ms, undefined, { signal });
  } catch {
    throw new GatewayAbortedError();
  }
}

/** Whether a failed create may be sent again under the rules of docs/protocol.md §6. */
export function createRetryIsSafe(error: GatewayError): boolean {
  if (error instanceof RateLimitedError) return true;
  if (error instanceof GatewayUnavailableError) {
    if (!error.requestSent) return true;
    return error.status === 503 && error.retryAfterMs !== undefined;
  }
  return false;
}

/** Runs one call to its result or its final error (see the budget above). */
export async function call<T>(engine: Engine, spec: CallSpec<T>): Promise<CallResult<T>> {
  const { pool, limits, log } = engine;
  const started = engine.now();
  const failedHere = new Set<string>();
  let attempts = 0;
  let failures = 0;
  let rateLimits = 0;
  let sticky: string | undefined;
  // Set in `always` mode once a create may have been processed: every later failure is ambiguous too.
  let mayHaveCreated: string | undefined;
  const final = (error: GatewayError): GatewayError =>
    mayHaveCreated === undefined || error instanceof GatewayAbortedError
      ? error
      : new AmbiguousCreateError(`${mayHaveCreated}; retries exhausted`, {
          status: error.status,
          baseUrl: error.baseUrl,
          attempts,
          cause: error,
        });

  for (;;) {
    if (spec.signal?.aborted) throw new GatewayAbortedError();
    const target = spec.target();
    // A fixed address goes to no base: crediting one (the pool's next pick) would name a base, even
    // a dead one, as having served what it never saw.
    const baseUrl = 'path' in target ? (sticky ?? pool.pick(failedHere)) : new URL(target.url).origin;
    sticky = undefined;
    const url = 'path' in target ? new URL(`${baseUrl}${target.path}`) : new URL(target.url);
    const body = await openBody(spec, final);
    attempts += 1;
    const exchangeMs = typeof spec.exchangeTimeoutMs === 'function' ? spec.exchangeTimeoutMs(body) : spec.exchangeTimeoutMs;
    const timer = exchangeMs === undefined ? undefined : deadline(exchangeMs);
    const signal = timer && spec.signal ? AbortSignal.any([spec.signal, timer.signal]) : (timer?.signal ?? spec.signal);
    let error: GatewayError;
    try {
      // The key goes only to the protocol's own endpoints: a path on a configured base address.
      const outcome = await attempt(engine, { ...spec, signal }, { baseUrl, url }, body, 'path' in target);
      if (outcome === AGAIN) continue;
      if ('path' in target) pool.reportSuccess(baseUrl);
      return { value: outcome.value, baseUrl, attempts };
    } catch (e) {
      if (!(e instanceof GatewayError)) throw e;
      error =
        timer?.expired && !spec.signal?.aborted
          ? new GatewayUnavailableError(
              `${baseUrl}: no complete answer within ${exchangeMs! / 1000} s (the deadline of a whole exchange)`,
              { baseUrl, requestSent: true, code: 'EXCHANGE_TIMEOUT' },
            )
          : e;
    } finally {
      timer?.clear();
      body?.dispose?.();
    }

    const left = limits.deadlineMs - (engine.now() - started);
    if (error instanceof RateLimitedError) {
      rateLimits += 1;
      const wait = Math.min(
        limits.maxWaitMs,
        error.retryAfterMs ?? backoffDelay(rateLimits - 1, { baseMs: 1_000, maxMs: limits.maxWaitMs, random: engine.random }),
      );
      if (rateLimits > limits.maxRateLimitRetries || wait > left) throw final(error);
      log('info', `rate limited by ${error.baseUrl ?? baseUrl}; retrying there in ${wait} ms`, {
        operation: spec.operation,
        attempt: attempts,
      });
      await sleep(wait, spec.signal);
      sticky = baseUrl;
      continue;
    }
    if (!(error instanceof GatewayUnavailableError)) throw final(error);

    failures += 1;
    if ('path' in target) {
      failedHere.add(baseUrl);
      const cooldown = pool.reportFailure(baseUrl, error.retryAfterMs ?? 0, describeError(error));
      // One line per failed call would flood the log in an outage: the pool's events (cooldown,
      // failover, recovered) are what the worker reports, once per outage (docs/logs.md).
      log('debug', `${spec.operation} failed on ${baseUrl}: ${describeError(error)}; base cooling down ${cooldown} ms`, {
        operation: spec.operation,
        attempt: attempts,
      });
    } else {
      log('warn', `${spec.operation} failed: ${describeError(error)}`, { operation: spec.operation, attempt: attempts });
    }
    if (spec.operation === 'create' && !createRetryIsSafe(error)) {
      const reason = `the create request may have been processed (${error.message})`;
      if (engine.createRetries !== 'always') {
        throw new AmbiguousCreateError(`${reason}; not retried automatically`, { status: error.status, baseUrl, attempts, cause: error });
      }
      mayHaveCreated = reason;
    }
    if (failures >= limits.maxAttempts || left <= 0) throw final(error);
    // The next healthy base is tried at once; a cooling one (or a fixed address) after a backoff.
    const next = pool.pick(failedHere);
    if ('url' in target || !pool.isHealthy(next)) {
      const backoff = Math.max(
        error.retryAfterMs ?? 0,
        backoffDelay(failures - 1, { baseMs: 250, maxMs: limits.maxWaitMs, random: engine.random }),
      );
      const cooling = 'path' in target ? pool.cooldownRemaining(next) : Infinity;
      await sleep(Math.min(cooling, left, limits.maxWaitMs, backoff), spec.signal);
    }
  }
}

/**
 * The attempt's own body, made fresh (a stream is read once). A failure to make it sent nothing,
 * but after a create that may have been processed it is still that create's outcome that counts.
 */
async function openBody<T>(spec: CallSpec<T>, final: (error: GatewayError) => GatewayError): Promise<PreparedBody | undefined> {
  try {
    return await spec.openBody?.();
  } catch (e) {
    throw e instanceof GatewayError ? final(e) : e;
  }
}

/** One attempt: send, then judge the answer. Throws the attempt's failure. */
async function attempt<T>(
  engine: Engine,
  spec: CallSpec<T>,
  start: Answered,
  body: PreparedBody | undefined,
  toEndpoint: boolean,
): Promise<{ value: T } | typeof AGAIN> {
  const { response, at, keySent } = await exchange(engine, spec, start, body, toEndpoint);
  if (response.status >= 200 && response.status < 300) {
    try {
      return { value: await spec.accept(response, at) };
    } catch (e) {
      discard(response.body);
      if (e instanceof GatewayError) throw e;
      throw networkError(e, { baseUrl: servedBy(engine, at), requestSent: true, signal: spec.signal });
    }
  }
  let text = '';
  try {
    text = await readText(response.body, 64 * 1024);
  } catch {
    // An unreadable error body still has a status.
  }
  if ((await spec.reject?.(response.status, at)) === 'again') return AGAIN;
  const refused = response.status === 401 || response.status === 403;
  if ((refused && !keySent) || (spec.operation === 'download' && response.status === 403)) {
    // A host that never received the key cannot be refusing it, and a 403 for a finished video is
    // about that video (new-api's fetch guard: "request blocked: port … is not allowed"), not quota.
    const said = parseErrorBody(text).message;
    throw unusable(
      spec.operation,
      `${sourceOf(at.url)} refused it (HTTP ${response.status}${said ? `: ${said}` : ''})` +
        (keySent ? '' : '; it was not sent the gateway key, so the key is not the problem'),
    );
  }
  throw classifyGatewayError({
    status: response.status,
    body: text,
    headers: response.headers,
    baseUrl: servedBy(engine, at),
    operation: spec.operation,
    model: spec.model,
    taskId: spec.taskId,
    apiKeyEnv: engine.apiKeyEnv,
    nowMs: engine.now(),
  });
}
