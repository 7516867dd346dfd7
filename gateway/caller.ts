// The retry/failover engine for one logical call (protocol §5 and §6). Reads fail over freely
// within bounds; creates are retried only when provably unprocessed (or always, if allowed); 429
// waits and retries on the same base without counting against it.
import { setTimeout as delay } from 'node:timers/promises';
import { backoffDelay } from './backoff';
import { classifyGatewayError, describeError, type GatewayOperation } from './classify';
import {
  AmbiguousCreateError, GatewayAbortedError, GatewayError, GatewayUnavailableError, RateLimitedError,
} from './errors';
import { discard, networkError, readText, type HttpResponse, type HttpTransport, type RequestBody } from './http';
import type { BaseUrlPool } from './pool';
import { redact, redactObject } from './redact';

export type LogFn = (level: 'debug' | 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;

export interface CallLimits {
  /** Requests per call across failovers (429 retries are counted separately). */
  maxAttempts: number;
  /** Wall time after which a call stops failing over, ms. */
  deadlineMs: number;
  maxRateLimitRetries: number;
  /** Cap on one Retry-After / backoff wait, ms. */
  maxWaitMs: number;
}

export interface CallerDeps {
  transport: HttpTransport;
  pool: BaseUrlPool;
  now: () => number;
  random: () => number;
  log: LogFn;
  apiKeyEnv?: string;
  createRetries: 'safe' | 'always';
  limits: CallLimits;
  headersTimeoutMs: number;
}

export interface PreparedBody {
  body: RequestBody;
  headers?: Record<string, string>;
  dispose?: () => void;
}

export interface CallSpec<T> {
  operation: GatewayOperation;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  /** A fresh body for every attempt (streams cannot be replayed). */
  openBody?: () => Promise<PreparedBody>;
  model?: string;
  taskId?: string;
  signal?: AbortSignal;
  /** Turns a 2xx response into the result; throw GatewayUnavailableError when it is unreadable. */
  accept(response: HttpResponse, baseUrl: string): Promise<T>;
}

export interface CallResult<T> {
  value: T;
  baseUrl: string;
  /** Requests sent, including 429-refused and provably unsent ones. */
  attempts: number;
}

export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  try {
    await delay(ms, undefined, signal ? { signal } : undefined);
  } catch {
    throw new GatewayAbortedError();
  }
}

/** Whether a failed create may be sent again under the protocol's §6 rules. */
export function createRetryIsSafe(error: GatewayError): boolean {
  if (error instanceof RateLimitedError) return true;
  if (error instanceof GatewayUnavailableError) {
    if (!error.requestSent) return true;
    return error.status === 503 && error.retryAfterMs !== undefined;
  }
  return false;
}

export function makeLogger(log: LogFn | undefined, secrets: string[]): LogFn {
  if (!log) return () => undefined;
  return (level, message, fields) => {
    try {
      log(level, redact(message, secrets), fields ? redactObject(fields, secrets) : undefined);
    } catch {
      // A broken logger must not break a call.
    }
  };
}

export async function call<T>(deps: CallerDeps, spec: CallSpec<T>): Promise<CallResult<T>> {
  const { pool, limits, log } = deps;
  const isCreate = spec.operation === 'create';
  const started = deps.now();
  const failedHere = new Set<string>();
  let attempts = 0;
  let failures = 0;
  let rateLimits = 0;
  let sticky: string | undefined;
  let ambiguous: GatewayError | undefined;

  for (;;) {
    if (spec.signal?.aborted) throw new GatewayAbortedError();
    const baseUrl = sticky ?? pool.pick(failedHere);
    sticky = undefined;
    const url = new URL(`${baseUrl}${spec.path}`);
    attempts += 1;
    let error: GatewayError;
    const prepared = spec.openBody ? await spec.openBody() : undefined;
    try {
      const response = await deps.transport.send({
        url, method: spec.method, headers: { ...spec.headers, ...prepared?.headers }, body: prepared?.body ?? null,
        ...(spec.signal ? { signal: spec.signal } : {}), headersTimeoutMs: deps.headersTimeoutMs,
      }, baseUrl);
      if (response.status >= 200 && response.status < 300) {
        try {
          const value = await spec.accept(response, baseUrl);
          pool.reportSuccess(baseUrl);
          return { value, baseUrl, attempts };
        } catch (e) {
          discard(response.body);
          if (e instanceof GatewayError && !(e instanceof GatewayUnavailableError)) throw e;
          throw e instanceof GatewayError ? e : networkError(e, { baseUrl, requestSent: true, ...(spec.signal ? { signal: spec.signal } : {}) });
        }
      }
      let text = '';
      try {
        text = await readText(response.body, 64 * 1024);
      } catch {
        // An unreadable error body still has a status.
      }
      throw classifyGatewayError({
        status: response.status, body: text, headers: response.headers, baseUrl, operation: spec.operation,
        nowMs: deps.now(), ...(spec.model !== undefined ? { model: spec.model } : {}),
        ...(spec.taskId !== undefined ? { taskId: spec.taskId } : {}),
        ...(deps.apiKeyEnv !== undefined ? { apiKeyEnv: deps.apiKeyEnv } : {}),
      });
    } catch (e) {
      if (!(e instanceof GatewayError)) throw e;
      error = e;
    } finally {
      prepared?.dispose?.();
    }

    if (error instanceof GatewayAbortedError) throw error;
    if (error instanceof RateLimitedError) {
      rateLimits += 1;
      if (rateLimits > limits.maxRateLimitRetries) throw error;
      const wait = Math.min(limits.maxWaitMs, error.retryAfterMs ?? backoffDelay(rateLimits - 1, { baseMs: 1_000, maxMs: limits.maxWaitMs, random: deps.random }));
      log('info', `rate limited by ${baseUrl}; retrying there in ${wait} ms`, { operation: spec.operation, attempt: attempts });
      await sleep(wait, spec.signal);
      sticky = baseUrl;
      continue;
    }
    if (!(error instanceof GatewayUnavailableError)) throw error;

    failures += 1;
    failedHere.add(baseUrl);
    const cooldown = pool.reportFailure(baseUrl, error.retryAfterMs ?? 0);
    log('warn', `${spec.operation} failed on ${baseUrl}: ${describeError(error)}; base cooling down ${cooldown} ms`,
      { operation: spec.operation, attempt: attempts });

    if (isCreate && !createRetryIsSafe(error)) {
      const reason = `the create request may have been processed (${error.message}); not retried automatically`;
      if (deps.createRetries !== 'always') {
        throw new AmbiguousCreateError(reason, { ...(error.status !== undefined ? { status: error.status } : {}), baseUrl, attempts, cause: error });
      }
      ambiguous = new AmbiguousCreateError(`${reason.replace('; not retried automatically', '')}; retries exhausted`,
        { baseUrl, attempts, cause: error });
    }
    const elapsed = deps.now() - started;
    if (attempts >= limits.maxAttempts || elapsed >= limits.deadlineMs) {
      if (ambiguous) throw new AmbiguousCreateError(ambiguous.message, { baseUrl, attempts, cause: error });
      throw error;
    }
    const next = pool.pick(failedHere);
    if (!pool.isHealthy(next)) {
      const backoff = backoffDelay(failures - 1, { baseMs: 250, maxMs: limits.maxWaitMs, random: deps.random });
      const wait = Math.min(pool.cooldownRemaining(next), limits.deadlineMs - elapsed, limits.maxWaitMs,
        Math.max(backoff, error.retryAfterMs ?? 0));
      await sleep(wait, spec.signal);
    }
  }
}
