// The GatewayClient: both video protocols, messages and downloads over one agent and one pool.
import { basename } from 'node:path';
import type { RenderRequest } from '../jobfile/plan';
import { parsePollAfter } from './backoff';
import { call, makeLogger, type CallerDeps, type CallSpec } from './caller';
import type {
  CreatedTask, GatewayClient, GatewayClientOptions, MessageResult, TaskRef, TaskStatus, VideoDownload,
} from './contract';
import { openVideoStream, sourceOf, type DownloadDeps, type VideoTarget } from './download';
import { DownloadError, GatewayUnavailableError, InvalidRequestError, TaskNotFoundError } from './errors';
import { buildGeneralCreateBody, GENERAL_CREATE_PATH, generalTaskPath, mimeTypeOf } from './general';
import { discard, header, HttpTransport, readText, type HttpResponse } from './http';
import { buildMessagesBody, MESSAGES_PATH, messagesHeaders, parseMessageBody } from './messages';
import { extractTaskId, normalizeBaseUrl, parseTaskBody } from './normalize';
import { buildOpenaiCreateBody, OPENAI_CREATE_PATH, openaiContentPath, openaiTaskPath, type ReferenceSource } from './openai';
import { BaseUrlPool } from './pool';
import { registerSecret } from './redact';

const DEFAULT_GRACE_MS = 60_000;

async function readJson(response: HttpResponse, what: string, baseUrl: string): Promise<unknown> {
  const text = await readText(response.body);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new GatewayUnavailableError(`${baseUrl} answered ${what} with HTTP ${response.status} but no JSON`, {
      status: response.status, baseUrl, requestSent: true,
    });
  }
}

class Client implements GatewayClient {
  readonly baseUrls: readonly string[];
  readonly pool: BaseUrlPool;
  private readonly transport: HttpTransport;
  private readonly deps: DownloadDeps;
  private readonly graceMs: number;
  private readonly now: () => number;

  constructor(private readonly options: GatewayClientOptions) {
    if (!options.apiKey) throw new InvalidRequestError(`no API key${options.apiKeyEnv ? ` in $${options.apiKeyEnv}` : ''}`);
    registerSecret(options.apiKey);
    const log = makeLogger(options.log, [options.apiKey]);
    const bases = options.baseUrls.map((raw) => normalizeBaseUrl(raw, (message) => log('warn', message)));
    this.baseUrls = [...new Set(bases)];
    this.now = options.now ?? Date.now;
    this.pool = new BaseUrlPool(this.baseUrls, {
      now: this.now,
      ...(options.cooldownMs !== undefined ? { cooldownMs: options.cooldownMs } : {}),
      ...(options.maxCooldownMs !== undefined ? { maxCooldownMs: options.maxCooldownMs } : {}),
    });
    const requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
    this.transport = new HttpTransport({
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      headersTimeoutMs: requestTimeoutMs,
      bodyTimeoutMs: requestTimeoutMs,
    });
    this.graceMs = options.notExistGraceMs ?? DEFAULT_GRACE_MS;
    const caller: CallerDeps = {
      transport: this.transport, pool: this.pool, now: this.now, random: Math.random, log,
      createRetries: options.createRetries ?? 'safe', headersTimeoutMs: requestTimeoutMs,
      ...(options.apiKeyEnv !== undefined ? { apiKeyEnv: options.apiKeyEnv } : {}),
      limits: {
        maxAttempts: options.maxAttempts ?? Math.max(6, this.baseUrls.length * 2 + 2),
        deadlineMs: options.failoverDeadlineMs ?? 120_000,
        maxRateLimitRetries: options.maxRateLimitRetries ?? 8,
        maxWaitMs: options.maxRetryAfterMs ?? 60_000,
      },
    };
    this.deps = {
      ...caller, apiKey: options.apiKey, bodyTimeoutMs: requestTimeoutMs,
      authOrigins: new Set(this.baseUrls.map((b) => new URL(b).origin)),
      resumeAttempts: options.downloadResumeAttempts ?? 5,
    };
  }

  private get bearer(): Record<string, string> {
    return { authorization: `Bearer ${this.options.apiKey}` };
  }

  async createTask(request: RenderRequest): Promise<CreatedTask> {
    const accept = async (response: HttpResponse, baseUrl: string): Promise<string> => {
      const body = await readJson(response, 'the create', baseUrl);
      const taskId = extractTaskId(body);
      if (!taskId) throw new GatewayUnavailableError(`${baseUrl} answered the create without a task id`, { baseUrl, status: response.status });
      return taskId;
    };
    let spec: CallSpec<string>;
    if (request.protocol === 'openai') {
      spec = {
        operation: 'create', method: 'POST', path: OPENAI_CREATE_PATH, headers: this.bearer, model: request.model, accept,
        openBody: async () => buildOpenaiCreateBody(request, (url) => this.openRemoteReference(url)),
      };
    } else {
      const body = await buildGeneralCreateBody(request);
      spec = {
        operation: 'create', method: 'POST', path: GENERAL_CREATE_PATH, model: request.model, accept,
        headers: { ...this.bearer, 'content-type': 'application/json' },
        openBody: () => Promise.resolve({ body }),
      };
    }
    const result = await call(this.deps, spec);
    return { taskId: result.value, baseUrl: result.baseUrl, attempts: result.attempts };
  }

  /** A remote reference image for multipart upload: fetched with our agent, never with the key. */
  private async openRemoteReference(url: URL): Promise<ReferenceSource> {
    let current = url;
    for (let hop = 0; hop <= 5; hop += 1) {
      const response = await this.transport.send({ url: current, method: 'GET' }, current.origin);
      const location = header(response.headers, 'location');
      if (response.status >= 300 && response.status < 400 && location) {
        discard(response.body);
        current = new URL(location, current);
        continue;
      }
      if (response.status !== 200) {
        discard(response.body);
        throw new InvalidRequestError(`reference image ${sourceOf(current)} could not be fetched (HTTP ${response.status})`);
      }
      const length = Number(header(response.headers, 'content-length') ?? Number.NaN);
      const name = basename(current.pathname) || 'reference';
      return {
        stream: response.body, filename: name, ...(Number.isFinite(length) ? { length } : {}),
        contentType: header(response.headers, 'content-type')?.split(';')[0] ?? mimeTypeOf(name, 'image'),
        dispose: () => discard(response.body),
      };
    }
    throw new InvalidRequestError(`reference image ${sourceOf(url)}: too many redirects`);
  }

  async getTask(ref: TaskRef, options: { createdAt?: number } = {}): Promise<TaskStatus> {
    const path = ref.protocol === 'openai' ? openaiTaskPath(ref.taskId) : generalTaskPath(ref.taskId);
    try {
      const result = await call(this.deps, {
        operation: 'retrieve', method: 'GET', path, headers: this.bearer, taskId: ref.taskId,
        accept: async (response, baseUrl) => {
          const body = await readJson(response, 'the status check', baseUrl);
          const wrapper = body as { code?: unknown; data?: unknown } | null;
          if (wrapper && wrapper.code === 'task_not_exist' && !wrapper.data) {
            throw new TaskNotFoundError(`task ${ref.taskId} was not found on the gateway`, { baseUrl, taskId: ref.taskId, status: response.status });
          }
          return { parsed: parseTaskBody(body), pollAfterMs: parsePollAfter(response.headers, this.now()) };
        },
      });
      const { parsed, pollAfterMs } = result.value;
      const status: TaskStatus = { taskId: ref.taskId, state: parsed.state, rawStatus: parsed.rawStatus, baseUrl: result.baseUrl };
      if (parsed.progress !== undefined) status.progress = parsed.progress;
      if (parsed.resultUrl !== undefined) status.resultUrl = parsed.resultUrl;
      if (parsed.failReason !== undefined) status.failReason = parsed.failReason;
      if (pollAfterMs !== undefined) status.pollAfterMs = pollAfterMs;
      return status;
    } catch (error) {
      if (error instanceof TaskNotFoundError && options.createdAt !== undefined && this.now() - options.createdAt < this.graceMs) {
        return { taskId: ref.taskId, state: 'pending', rawStatus: 'task_not_exist', baseUrl: error.baseUrl ?? this.pool.pick() };
      }
      if (error instanceof TaskNotFoundError && options.createdAt !== undefined) {
        throw new TaskNotFoundError(`${error.message}; still missing ${Math.round((this.now() - options.createdAt) / 1000)} s after `
          + 'creation, so it is taken as lost', { ...(error.status !== undefined ? { status: error.status } : {}),
          ...(error.baseUrl !== undefined ? { baseUrl: error.baseUrl } : {}), taskId: ref.taskId });
      }
      throw error;
    }
  }

  /** A general-protocol result_url under a configured base is re-rooted on whichever base is healthy. */
  private targetFor(url: string | undefined, ref: TaskRef): VideoTarget {
    if (url) {
      const base = this.baseUrls.find((b) => url.startsWith(`${b}/`));
      return base ? { kind: 'gateway', path: url.slice(base.length) } : { kind: 'url', url };
    }
    return { kind: 'gateway', path: openaiContentPath(ref.taskId) };
  }

  private async freshTarget(ref: TaskRef): Promise<VideoTarget> {
    if (ref.protocol === 'openai') return this.targetFor(undefined, ref);
    const status = await this.getTask({ taskId: ref.taskId, protocol: ref.protocol });
    if (status.state !== 'succeeded') {
      throw new DownloadError(`task ${ref.taskId} is not finished (status ${status.rawStatus || status.state})`, { retryable: true });
    }
    return this.targetFor(status.resultUrl, ref);
  }

  async openVideo(ref: TaskRef, options: { offset?: number; ifRange?: string; signal?: AbortSignal } = {}): Promise<VideoDownload> {
    const target = ref.protocol === 'general' && !ref.resultUrl ? await this.freshTarget(ref) : this.targetFor(ref.resultUrl, ref);
    return openVideoStream(this.deps, target, {
      taskId: ref.taskId, refresh: () => this.freshTarget(ref), ...(options.signal ? { signal: options.signal } : {}),
    }, Math.max(0, Math.floor(options.offset ?? 0)), options.ifRange);
  }

  async createMessage(input: { model: string; maxTokens: number; system?: string; prompt: string }): Promise<MessageResult> {
    const body = buildMessagesBody(input);
    const result = await call(this.deps, {
      operation: 'message', method: 'POST', path: MESSAGES_PATH, headers: messagesHeaders(this.options.apiKey), model: input.model,
      openBody: () => Promise.resolve({ body }),
      accept: async (response, baseUrl) => {
        const json = await readJson(response, 'the message', baseUrl);
        const parsed = parseMessageBody(json, input.model);
        if (!parsed) throw new GatewayUnavailableError(`${baseUrl} answered the message without content`, { baseUrl, status: response.status });
        return parsed;
      },
    });
    return { ...result.value, baseUrl: result.baseUrl };
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}

export function createGatewayClient(options: GatewayClientOptions): GatewayClient & { readonly pool: BaseUrlPool } {
  return new Client(options);
}
