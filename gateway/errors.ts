// One class per failure kind, so callers branch on types (and `kind`, which becomes the Temporal
// failure type and the manifest's error.kind), never on message text. Every message and cause is
// redacted on construction: nothing thrown from gateway/ carries the key.
import { GatewayFailure, type GatewayErrorKind } from '../domain/failures';
import { redact } from './redact';

export type { GatewayErrorKind };

export interface GatewayErrorInit {
  status?: number;
  baseUrl?: string;
  /** The server's own message, when there was one (redacted). */
  serverMessage?: string;
  /** Undici/system error code for network-level failures, e.g. `ECONNREFUSED`. */
  code?: string;
  cause?: unknown;
  retryable?: boolean;
}

/** A plain, redacted stand-in for a lower-level error (undici errors can reference request options). */
export class CauseSummary extends Error {
  override readonly name: string;
  readonly code?: string;
  constructor(source: unknown) {
    const err = source instanceof Error ? source : undefined;
    super(redact(err ? err.message : String(source)));
    this.name = err?.name ?? 'Error';
    const code = (source as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string') this.code = code;
    this.stack = `${this.name}: ${this.message}`;
  }
}

export abstract class GatewayError extends Error {
  abstract readonly kind: GatewayErrorKind;
  readonly status?: number;
  readonly baseUrl?: string;
  readonly serverMessage?: string;
  readonly code?: string;
  /** Worth trying the same operation again later. */
  readonly retryable: boolean;

  constructor(message: string, init: GatewayErrorInit, defaults: { retryable: boolean }) {
    super(redact(message), init.cause !== undefined ? { cause: sanitizeCause(init.cause) } : undefined);
    this.name = new.target.name;
    this.status = init.status;
    this.baseUrl = init.baseUrl;
    this.serverMessage = init.serverMessage === undefined ? undefined : redact(init.serverMessage);
    this.code = init.code;
    this.retryable = init.retryable ?? defaults.retryable;
    if (this.stack) this.stack = redact(this.stack);
  }

  /** What the manifest and Temporal get (JSON leaves out the undefined fields). */
  toJSON(): { kind: GatewayErrorKind; message: string; status?: number; baseUrl?: string } {
    return { kind: this.kind, message: this.message, status: this.status, baseUrl: this.baseUrl };
  }
}

function sanitizeCause(cause: unknown): unknown {
  if (cause instanceof GatewayError || cause instanceof CauseSummary) return cause;
  return new CauseSummary(cause);
}

/** 401: the key was refused. Stops the whole job. */
export class AuthError extends GatewayError {
  readonly kind = GatewayFailure.auth;
  constructor(message: string, init: GatewayErrorInit = {}) {
    super(message, init, { retryable: false });
  }
}

/** 404 (or 503 model_not_found): unknown model, or not in the key's token group. */
export class ModelUnavailableError extends GatewayError {
  readonly kind = GatewayFailure.modelUnavailable;
  readonly model?: string;
  constructor(message: string, init: GatewayErrorInit & { model?: string } = {}) {
    super(message, init, { retryable: false });
    this.model = init.model;
  }
}

/** 429. Retried on the same base after `retryAfterMs`; never a base failure. */
export class RateLimitedError extends GatewayError {
  readonly kind = GatewayFailure.rateLimited;
  readonly retryAfterMs?: number;
  constructor(message: string, init: GatewayErrorInit & { retryAfterMs?: number } = {}) {
    super(message, init, { retryable: true });
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** 5xx, HTML from a proxy, or a network-level failure of one base. */
export class GatewayUnavailableError extends GatewayError {
  readonly kind = GatewayFailure.gatewayUnavailable;
  /** Whether the request may have reached the gateway (decides create retries, docs/protocol.md §6). */
  readonly requestSent: boolean;
  readonly retryAfterMs?: number;
  constructor(message: string, init: GatewayErrorInit & { requestSent?: boolean; retryAfterMs?: number } = {}) {
    super(message, init, { retryable: true });
    this.requestSent = init.requestSent ?? true;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** 400 and other 4xx the gateway gave a reason for: fatal for the item. */
export class InvalidRequestError extends GatewayError {
  readonly kind = GatewayFailure.invalidRequest;
  constructor(message: string, init: GatewayErrorInit = {}) {
    super(message, init, { retryable: false });
  }
}

/**
 * A local reference is not the file the plan checked: reached through a link, outside its folder,
 * or with other content than the sha256 taken when the job was planned. Nothing of it was sent;
 * final for the item (another attempt meets the same file), never for the job.
 */
export class ReferenceChangedError extends GatewayError {
  readonly kind = GatewayFailure.referenceChanged;
  constructor(message: string, init: GatewayErrorInit = {}) {
    super(message, init, { retryable: false });
  }
}

/**
 * 404 for the path itself (FastAPI's `{"detail":"Not Found"}`, new-api's "Invalid URL (…)"): the
 * gateway does not serve this protocol there. Not an unknown model: fixing the model name won't help.
 */
export class RouteNotFoundError extends GatewayError {
  readonly kind = GatewayFailure.routeNotFound;
  constructor(message: string, init: GatewayErrorInit = {}) {
    super(message, init, { retryable: false });
  }
}

/** task_not_exist / "Task not found" after the grace period: the task is lost. */
export class TaskNotFoundError extends GatewayError {
  readonly kind = GatewayFailure.taskNotFound;
  readonly taskId?: string;
  constructor(message: string, init: GatewayErrorInit & { taskId?: string } = {}) {
    super(message, init, { retryable: false });
    this.taskId = init.taskId;
  }
}

/** A create whose outcome is unknown: it may have started a paid render. Not retried by default. */
export class AmbiguousCreateError extends GatewayError {
  readonly kind = GatewayFailure.ambiguousCreate;
  /** Create requests sent before giving up. */
  readonly attempts: number;
  constructor(message: string, init: GatewayErrorInit & { attempts?: number } = {}) {
    super(message, init, { retryable: false });
    this.attempts = init.attempts ?? 1;
  }
}

/**
 * The key's quota or the account's balance is used up (new-api's 403 `insufficient_user_quota`, its
 * token "额度已用尽"; LiteLLM's `budget_exceeded`; OpenAI's 429 `insufficient_quota`): no item can
 * render until it is topped up. Stops the whole job.
 */
export class QuotaExhaustedError extends GatewayError {
  readonly kind = GatewayFailure.quotaExhausted;
  constructor(message: string, init: GatewayErrorInit = {}) {
    super(message, init, { retryable: false });
  }
}

/** 403: key not allowed this model (or a quota the gateway did not name as such). */
export class QuotaOrPermissionError extends GatewayError {
  readonly kind = GatewayFailure.quotaOrPermission;
  constructor(message: string, init: GatewayErrorInit = {}) {
    super(message, init, { retryable: false });
  }
}

/** The video could not be fetched (completely). `bytesReceived` counts from the requested offset. */
export class DownloadError extends GatewayError {
  readonly kind = GatewayFailure.download;
  readonly bytesReceived?: number;
  constructor(message: string, init: GatewayErrorInit & { bytesReceived?: number } = {}) {
    super(message, init, { retryable: true });
    this.bytesReceived = init.bytesReceived;
  }
}

/**
 * The key was not sent: the connection reached a program the user's key rule does not send it to
 * (another user's listener on a loopback port: gateway/key-route.ts). Nothing was sent on it; no
 * retry or other base mends it, so it stops the job like a missing key.
 */
export class GatewayKeyWithheldError extends GatewayError {
  readonly kind = GatewayFailure.missingKey;
  constructor(message: string, init: GatewayErrorInit = {}) {
    super(message, init, { retryable: false });
  }
}

/** The caller's AbortSignal fired. */
export class GatewayAbortedError extends GatewayError {
  readonly kind = GatewayFailure.aborted;
  constructor(message = 'the request was aborted', init: GatewayErrorInit = {}) {
    super(message, init, { retryable: false });
  }
}

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}
