// HTTP failures -> error classes. Status first, then body (docs/protocol.md §6). Pure: no I/O.
import { parseRetryAfter } from './backoff';
import {
  AuthError,
  GatewayUnavailableError,
  InvalidRequestError,
  ModelUnavailableError,
  QuotaExhaustedError,
  QuotaOrPermissionError,
  RouteNotFoundError,
  RateLimitedError,
  TaskNotFoundError,
  DownloadError,
  type GatewayError,
} from './errors';
import { isKeyUnreadable, isMissingRoute, isModelNotFound, isQuotaExhausted, isTaskNotFound, unwrapMessage } from './dialects';
import { gatewayText, redact } from './redact';

export { isModelNotFound };

/** What a call is for: decides its retry rules (creates) and how its failures read. */
export type GatewayOperation = 'create' | 'retrieve' | 'download' | 'message' | 'reference';

export type ErrorBodyShape = 'task' | 'openai' | 'anthropic' | 'empty' | 'html' | 'text';

export interface ErrorBody {
  shape: ErrorBodyShape;
  message?: string;
  /** `code` of task and OpenAI-style bodies (`task_not_exist`, `model_not_found`, …). */
  code?: string;
  /** `error.type` of OpenAI/Anthropic-style bodies; unreliable through the gateway. */
  type?: string;
}

const clip = (text: string): string => gatewayText(text);

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** Reads a message out of any of the five body shapes (task, OpenAI, Anthropic, empty, HTML). */
export function parseErrorBody(text: string | undefined): ErrorBody {
  const raw = (text ?? '').trim();
  if (raw === '') return { shape: 'empty' };
  if (raw.startsWith('{')) {
    try {
      const body = JSON.parse(raw) as Record<string, unknown>;
      const error = body.error;
      if (error !== null && typeof error === 'object') {
        const e = error as Record<string, unknown>;
        const shape: ErrorBodyShape = body.type === 'error' ? 'anthropic' : 'openai';
        const out: ErrorBody = { shape };
        const wrapped = str(e.message) ?? str(body.message);
        const inner = wrapped === undefined ? undefined : unwrapMessage(wrapped);
        const message = inner?.message ?? wrapped;
        if (message) out.message = clip(message);
        const code = inner?.code ?? str(e.code) ?? str(body.code);
        if (code) out.code = code;
        const type = str(e.type);
        if (type) out.type = type;
        return out;
      }
      const out: ErrorBody = { shape: 'task' };
      // `detail` is FastAPI's (LiteLLM's) own answer, e.g. {"detail":"Not Found"} for a missing route.
      const message = str(body.message) ?? str(body.msg) ?? str(error) ?? str(body.detail);
      if (message) out.message = clip(message);
      const code = typeof body.code === 'number' ? String(body.code) : str(body.code);
      if (code) out.code = code;
      return out;
    } catch {
      // Not JSON after all: fall through to text.
    }
  }
  if (/^<(!doctype|html|head|body)/i.test(raw) || /<\/html>/i.test(raw)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(raw)?.[1] ?? /<h1[^>]*>([^<]*)<\/h1>/i.exec(raw)?.[1];
    return { shape: 'html', message: title ? `HTML page: ${clip(title)}` : 'HTML page (not JSON)' };
  }
  return { shape: 'text', message: clip(raw) };
}

/** A task `code` saying the task is unknown (in a 200 wrapper too), by the one recognizer of gateway/dialects. */
export function isTaskNotExistCode(code: unknown): boolean {
  return typeof code === 'string' && isTaskNotFound({ code });
}

export interface HttpFailure {
  status: number;
  /** Response body text (may be empty). */
  body?: string;
  headers?: Record<string, string | string[] | undefined>;
  baseUrl?: string;
  operation?: GatewayOperation;
  model?: string;
  taskId?: string;
  /** Name of the environment variable holding the key, for the 401 message. */
  apiKeyEnv?: string;
  /** For HTTP-date Retry-After values. */
  nowMs?: number;
}

export function modelUnavailableMessage(model: string | undefined, status: number, detail: string): string {
  const name = model ? `model "${model}"` : 'the model';
  return (
    `${name} is not available to this key (HTTP ${status}${detail}): check the model name against the catalog ` +
    'and that the key was created in the matching token group'
  );
}

/** Maps an HTTP error response to its error class. */
export function classifyGatewayError(failure: HttpFailure): GatewayError {
  const { status, baseUrl, operation, model, taskId } = failure;
  const body = parseErrorBody(failure.body);
  const serverMessage = body.message;
  const detail = serverMessage ? `: ${serverMessage}` : '';
  const at = baseUrl ? ` from ${baseUrl}` : '';
  const init = { status, baseUrl, serverMessage };
  const retryAfterMs = parseRetryAfter(failure.headers?.['retry-after'], failure.nowMs ?? Date.now());

  if ((status === 400 || status === 401 || status === 402 || status === 403 || status === 429) && isQuotaExhausted(body)) {
    return new QuotaExhaustedError(
      `the key's quota or the account's balance is used up (HTTP ${status}${at}${detail}): top it up, then run the job again`,
      init,
    );
  }
  if (status === 401 || (status === 400 && isKeyUnreadable(body))) {
    const keyVar = failure.apiKeyEnv ? `the key in $${failure.apiKeyEnv}` : 'the configured API key';
    return new AuthError(`the gateway refused ${keyVar} (HTTP ${status}${at}${detail}); fix the key and run again`, init);
  }
  if (status === 403) {
    const name = model ? `model "${model}"` : 'this model';
    return new QuotaOrPermissionError(
      `the key may not use ${name} or its quota is exhausted (HTTP 403${at}${detail}): ` +
        'check the token group the key was created in and its quota',
      init,
    );
  }
  if (status === 429) {
    return new RateLimitedError(`rate limited (HTTP 429${at}${detail})`, { ...init, retryAfterMs });
  }
  if ((status === 400 || status === 404 || status === 503) && isModelNotFound(body)) {
    return new ModelUnavailableError(modelUnavailableMessage(model, status, `${at}${detail}`), { ...init, model });
  }
  if (status === 404 && isMissingRoute(body)) {
    return new RouteNotFoundError(
      `the gateway has no such route (HTTP 404${at}${detail}): it does not serve this protocol at this address; ` +
        "check that the base address is the gateway's root and that the gateway offers the protocol",
      init,
    );
  }
  if (status === 404 && (operation === 'create' || operation === 'message')) {
    return new ModelUnavailableError(modelUnavailableMessage(model, status, `${at}${detail}`), { ...init, model });
  }
  // A create or a message has no task yet: its 400 naming a missing video (a reference) is about the request.
  const asksTask = operation !== 'create' && operation !== 'message';
  if (status === 404 || (status === 400 && asksTask && isTaskNotFound(body))) {
    const what = taskId ? `task ${taskId}` : 'the task';
    return new TaskNotFoundError(`${what} was not found on the gateway (HTTP ${status}${at}${detail})`, { ...init, taskId });
  }
  if (status === 408 || status >= 500) {
    return new GatewayUnavailableError(`the gateway is unavailable (HTTP ${status}${at}${detail})`, {
      ...init,
      retryAfterMs,
      requestSent: true,
    });
  }
  if (operation === 'download') {
    return new DownloadError(`the video could not be fetched (HTTP ${status}${at}${detail})`, {
      ...init,
      retryable: status === 400 || status === 409 || status === 425,
    });
  }
  return new InvalidRequestError(`the gateway rejected the request (HTTP ${status}${at}${detail})`, init);
}

/** A short, redacted description of an error for logs. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return redact(`${error.name}: ${error.message}`);
  return redact(String(error));
}
