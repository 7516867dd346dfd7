// The worst case of one gateway call, per kind: how long it may take and how many requests it may
// send. The one source of these numbers: the client (client.ts) takes its limits and each attempt's
// exchange deadline from here, and the worker gives the workflows a job's budgets when it plans the
// job (activities/plan.ts), from which every gateway activity's timeout is computed
// (workflows/activities.ts). The engine that keeps within them is retry.ts; the figures with the
// defaults are in docs/limits.md.
import { MAX_REFERENCE_BYTES } from '../jobfile/reference-limits';
import type { CallBudgetsMs, RenderRequest } from '../jobfile/plan';

/** TCP/TLS connect timeout of one attempt. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Wall time of one call: no wait runs past it and no attempt starts after it (retry.ts). */
export const CALL_DEADLINE_MS = 120_000;
/** 429 answers per call that are waited out and retried on the same base. */
export const MAX_RATE_LIMIT_RETRIES = 8;
/**
 * The slowest upload a create is allowed for: its body's bytes at this rate come on top of the
 * exchange's two request timeouts. 1 MB/s is a slow office uplink; a gateway reached more slowly
 * than that cuts a create with a large reference (its exchange deadline) and the item ends unknown.
 */
export const UPLOAD_FLOOR_BYTES_PER_SECOND = 1_000_000;

/** Failed attempts per call (5xx, network, unreadable answers) before giving up: every base twice, at least 6. */
export function maxFailedAttempts(baseCount: number): number {
  return Math.max(6, 2 * baseCount + 2);
}

/**
 * The deadline of one attempt's whole exchange (connect, body sent, answer read): twice the request
 * timeout (undici answers a silent server after one; this catches one that sends a byte at a time),
 * plus, for a body, its bytes at the upload floor.
 */
export function exchangeTimeoutMs(requestTimeoutMs: number, bodyBytes = 0): number {
  return 2 * requestTimeoutMs + Math.ceil((bodyBytes * 1000) / UPLOAD_FLOOR_BYTES_PER_SECOND);
}

export type CallKind = 'create' | 'status' | 'message';

export interface BudgetInput {
  requestTimeoutMs: number;
  /** How many base addresses the job has (requests grow with them, time does not). */
  baseCount: number;
  /** create: the largest body it may send, bytes. */
  bodyBytes?: number;
  /** create: whether it first fetches a remote reference (openai protocol, an http(s) image). */
  fetchesReference?: boolean;
}

export interface CallBudget {
  /** The longest one call may last, ms. */
  timeMs: number;
  /** The most requests one call may send (a create in `safe` mode: at most one that may have been processed). */
  requests: number;
}

/**
 * One call's worst case. Waits and earlier attempts end by the deadline, and the last attempt may
 * start just before it, so a call lasts at most the deadline plus one attempt: its exchange
 * deadline (which includes connecting), and for an openai create with a remote reference, first
 * that reference's fetch (itself a call, whose last attempt waits for headers: connect + timeout).
 */
export function callBudget(kind: CallKind, input: BudgetInput): CallBudget {
  const { requestTimeoutMs, baseCount } = input;
  const requests = maxFailedAttempts(baseCount) + MAX_RATE_LIMIT_RETRIES;
  if (kind !== 'create') return { timeMs: CALL_DEADLINE_MS + exchangeTimeoutMs(requestTimeoutMs), requests };
  const fetch = input.fetchesReference ? CALL_DEADLINE_MS + CONNECT_TIMEOUT_MS + requestTimeoutMs : 0;
  return { timeMs: CALL_DEADLINE_MS + fetch + exchangeTimeoutMs(requestTimeoutMs, input.bodyBytes ?? 0), requests };
}

/** Room for a body's fields, multipart boundaries and JSON keys around the prompt and references. */
const BODY_ENVELOPE_BYTES = 4 * 1024;

/**
 * The most bytes a create of this request may send, whichever protocol: the prompt as JSON, and
 * each reference as the larger of its two forms (general: a local file inline as a base64 data:
 * URL; openai: an http(s) image fetched and uploaded, of unknown size up to the reference limit).
 * `sizeOf` gives a local file's size (undefined: unknown, counted at the limit).
 */
export function createBodyBound(request: RenderRequest, sizeOf: (path: string) => number | undefined): number {
  let bytes = BODY_ENVELOPE_BYTES + Buffer.byteLength(JSON.stringify(request.prompt), 'utf8');
  for (const ref of request.references) {
    if (ref.local) bytes += 64 + 4 * Math.ceil((sizeOf(ref.source) ?? MAX_REFERENCE_BYTES) / 3);
    else if (request.protocol === 'openai' && /^https?:/i.test(ref.source)) bytes += MAX_REFERENCE_BYTES;
    else bytes += ref.source.length;
  }
  return bytes;
}

/** Whether a create of this request fetches a remote reference first (openai uploads the image itself). */
export function fetchesReference(request: RenderRequest): boolean {
  return request.protocol === 'openai' && request.references.some((r) => r.kind === 'image' && /^https?:/i.test(r.source));
}

/**
 * The budgets of one job: its request timeout, its base addresses, and for creates the largest
 * body any of its requests may send (and whether any fetches a remote reference first).
 */
export function jobCallBudgets(
  gateway: { requestTimeoutMs: number; baseUrls: readonly string[] },
  requests: Iterable<RenderRequest>,
  sizeOf: (path: string) => number | undefined,
): CallBudgetsMs {
  const common = { requestTimeoutMs: gateway.requestTimeoutMs, baseCount: gateway.baseUrls.length };
  let bodyBytes = 0;
  let fetches = false;
  for (const request of requests) {
    bodyBytes = Math.max(bodyBytes, createBodyBound(request, sizeOf));
    fetches ||= fetchesReference(request);
  }
  return {
    create: callBudget('create', { ...common, bodyBytes, fetchesReference: fetches }).timeMs,
    status: callBudget('status', common).timeMs,
    message: callBudget('message', common).timeMs,
  };
}
