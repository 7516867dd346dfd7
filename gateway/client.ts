// The GatewayClient: both video protocols, messages and downloads, every request one call of the
// retry engine (retry.ts) over one agent and one pool of base addresses.
import { basename } from 'node:path';
import type { RenderRequest } from '../jobfile/plan';
import { DEFAULT_REQUEST_TIMEOUT_MS, normaliseBaseUrl } from '../jobfile/values';
import { parsePollAfter } from './backoff';
import { billedUsd } from './billed';
import { isTaskNotExistCode } from './classify';
import type {
  CreatedTask,
  GatewayClient,
  GatewayClientOptions,
  GatewayLog,
  MessageResult,
  TaskRef,
  TaskStatus,
  VideoDownload,
} from './contract';
import { openVideoStream } from './download';
import { fetchFrameImage, type FrameImage } from './frame-image';
import { DownloadError, GatewayUnavailableError, InvalidRequestError, TaskNotFoundError } from './errors';
import { GENERAL_CREATE_PATH, generalTaskPath, mimeTypeOf, prepareGeneralCreateBody } from './general';
import { discard, header, HttpTransport, readText, sourceOf, type HttpResponse } from './http';
import { buildMessagesBody, MESSAGES_HEADERS, MESSAGES_PATH, parseMessageBody } from './messages';
import { extractTaskId, parseTaskBody } from './normalize';
import { buildOpenaiCreateBody, OPENAI_CREATE_PATH, openaiContentPath, openaiTaskPath, type ReferenceSource } from './openai';
import { BaseUrlPool, type PoolListener } from './pool';
import { redactedLog, registerSecret } from './redact';
import { call, type CallSpec, type Engine, type PreparedBody, type Target } from './retry';
import { CALL_DEADLINE_MS, CONNECT_TIMEOUT_MS, exchangeTimeoutMs, MAX_RATE_LIMIT_RETRIES, maxFailedAttempts } from './budget';
import { MAX_REFERENCE_BYTES } from '../jobfile/reference-limits';
import { isPrivateHost } from './outbound';

const DEFAULT_GRACE_MS = 60_000;

async function readJson(response: HttpResponse, what: string, baseUrl: string): Promise<unknown> {
  const text = await readText(response.body);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new GatewayUnavailableError(`${baseUrl} answered ${what} with HTTP ${response.status} but no JSON`, {
      status: response.status,
      baseUrl,
      requestSent: true,
    });
  }
}

/** The base addresses as the client uses them: normalised by the job file's one rule, a warning for each change. */
function baseAddresses(raw: readonly string[], log: GatewayLog): string[] {
  const bases = raw.map((value) => {
    const check = normaliseBaseUrl(value);
    if (!check.ok) throw new TypeError(`base address "${value.trim()}" ${check.problem}`);
    if (check.removed.length > 0) {
      log(
        'warn',
        `base address "${value.trim()}": removed ${check.removed.join(' and ')}; using "${check.normalised}" ` +
          '(the client adds /v1/… itself)',
      );
    }
    return check.normalised;
  });
  return [...new Set(bases)];
}

/** A create body's length as its headers declare it; unknown (streamed as it comes): the most a reference may have. */
function declaredLength(body: PreparedBody | undefined): number {
  const declared = Number(body?.headers?.['content-length']);
  return Number.isFinite(declared) && declared >= 0 ? declared : MAX_REFERENCE_BYTES;
}

/** The client's options and an observer of its failovers and cooldowns (the worker's metrics; no Temporal here). */
export interface ObservedClientOptions extends GatewayClientOptions {
  onEvent?: PoolListener;
}

class Client implements GatewayClient {
  readonly baseUrls: readonly string[];
  readonly pool: BaseUrlPool;
  private readonly transport: HttpTransport;
  private readonly engine: Engine;
  private readonly graceMs: number;
  private readonly resumeAttempts: number;
  /** The job's request_timeout: each attempt's exchange deadline is computed from it (budget.ts), and downloads scale their stall rule by it (gateway/download.ts). */
  private readonly requestTimeoutMs: number;
  private readonly now: () => number;

  constructor(options: ObservedClientOptions) {
    if (!options.apiKey) throw new InvalidRequestError(`no API key${options.apiKeyEnv ? ` in $${options.apiKeyEnv}` : ''}`);
    registerSecret(options.apiKey);
    const log = redactedLog(options.log, [options.apiKey]);
    this.baseUrls = baseAddresses(options.baseUrls, log);
    this.now = options.now ?? Date.now;
    this.pool = new BaseUrlPool(this.baseUrls, {
      now: this.now,
      cooldownMs: options.cooldownMs,
      maxCooldownMs: options.maxCooldownMs,
      onEvent: options.onEvent,
    });
    const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.requestTimeoutMs = requestTimeoutMs;
    this.transport = new HttpTransport({
      connectTimeoutMs: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      headersTimeoutMs: requestTimeoutMs,
      bodyTimeoutMs: requestTimeoutMs,
    });
    this.graceMs = options.notExistGraceMs ?? DEFAULT_GRACE_MS;
    this.resumeAttempts = options.downloadResumeAttempts ?? 5;
    this.engine = {
      transport: this.transport,
      pool: this.pool,
      apiKey: options.apiKey,
      apiKeyEnv: options.apiKeyEnv,
      authOrigins: new Set(this.baseUrls.map((b) => new URL(b).origin)),
      // A gateway on a private network hands out addresses on that network; elsewhere only if allowed.
      allowPrivateTargets: options.allowPrivateTargets ?? this.baseUrls.some((b) => isPrivateHost(new URL(b).hostname)),
      createRetries: options.createRetries ?? 'safe',
      now: this.now,
      random: Math.random,
      log,
      limits: {
        maxAttempts: options.maxAttempts ?? maxFailedAttempts(this.baseUrls.length),
        deadlineMs: options.failoverDeadlineMs ?? CALL_DEADLINE_MS,
        maxRateLimitRetries: options.maxRateLimitRetries ?? MAX_RATE_LIMIT_RETRIES,
        maxWaitMs: options.maxRetryAfterMs ?? 60_000,
      },
    };
  }

  async createTask(request: RenderRequest, options: { signal?: AbortSignal } = {}): Promise<CreatedTask> {
    const accept = async (response: HttpResponse, at: { baseUrl: string }): Promise<{ taskId: string; billedUsd?: number }> => {
      const body = await readJson(response, 'the create', at.baseUrl);
      const taskId = extractTaskId(body);
      if (!taskId)
        throw new GatewayUnavailableError(`${at.baseUrl} answered the create without a task id`, {
          baseUrl: at.baseUrl,
          status: response.status,
        });
      const billed = billedUsd(response.headers);
      return billed === undefined ? { taskId } : { taskId, billedUsd: billed };
    };
    // A create may upload reference files: its exchange gets their time at the upload floor, from
    // the length of the body each attempt opens (a body of unknown length, a remote reference
    // streamed as it comes, is counted at the most a reference may have).
    const common = {
      operation: 'create',
      method: 'POST',
      credential: 'bearer',
      model: request.model,
      accept,
      signal: options.signal,
      exchangeTimeoutMs: (body: PreparedBody | undefined) => exchangeTimeoutMs(this.requestTimeoutMs, declaredLength(body)),
    } as const;
    let spec: CallSpec<{ taskId: string; billedUsd?: number }>;
    if (request.protocol === 'openai') {
      spec = {
        ...common,
        target: () => ({ path: OPENAI_CREATE_PATH }),
        openBody: () => buildOpenaiCreateBody(request, (url) => this.openRemoteReference(url)),
      };
    } else {
      // Streamed from the reference files, so it is made again for every attempt and failover.
      spec = { ...common, target: () => ({ path: GENERAL_CREATE_PATH }), openBody: () => prepareGeneralCreateBody(request) };
    }
    const result = await call(this.engine, spec);
    return { ...result.value, baseUrl: result.baseUrl, attempts: result.attempts };
  }

  /** A remote reference image for multipart upload: fetched with our agent, never with the key. */
  private async openRemoteReference(url: URL): Promise<ReferenceSource> {
    const refused = (status: number, at: { url: URL }): never => {
      throw new InvalidRequestError(`reference image ${sourceOf(at.url)} could not be fetched (HTTP ${status})`);
    };
    const { value } = await call(this.engine, {
      operation: 'reference',
      method: 'GET',
      credential: 'none',
      followRedirects: true,
      target: () => ({ url: url.href }),
      accept: (response, at) => Promise.resolve(response.status === 200 ? { response, url: at.url } : refused(response.status, at)),
      reject: refused,
    });
    const { response } = value;
    const length = Number(header(response.headers, 'content-length') ?? Number.NaN);
    const name = basename(value.url.pathname) || 'reference';
    return {
      stream: response.body,
      filename: name,
      length: Number.isFinite(length) ? length : undefined,
      contentType: header(response.headers, 'content-type')?.split(';')[0] ?? mimeTypeOf(name, 'image'),
      dispose: () => discard(response.body),
    };
  }

  async getTask(ref: TaskRef, options: { createdAt?: number; signal?: AbortSignal } = {}): Promise<TaskStatus> {
    const path = ref.protocol === 'openai' ? openaiTaskPath(ref.taskId) : generalTaskPath(ref.taskId);
    try {
      const result = await call(this.engine, {
        operation: 'retrieve',
        method: 'GET',
        credential: 'bearer',
        taskId: ref.taskId,
        target: () => ({ path }),
        signal: options.signal,
        exchangeTimeoutMs: exchangeTimeoutMs(this.requestTimeoutMs),
        accept: async (response, { baseUrl }) => {
          const body = await readJson(response, 'the status check', baseUrl);
          const wrapper = body as { code?: unknown; data?: unknown } | null;
          if (wrapper && isTaskNotExistCode(wrapper.code) && !wrapper.data) {
            throw new TaskNotFoundError(`task ${ref.taskId} was not found on the gateway`, {
              baseUrl,
              taskId: ref.taskId,
              status: response.status,
            });
          }
          return { parsed: parseTaskBody(body), pollAfterMs: parsePollAfter(response.headers, this.now()) };
        },
      });
      const { parsed, pollAfterMs } = result.value;
      return {
        taskId: ref.taskId,
        state: parsed.state,
        rawStatus: parsed.rawStatus,
        baseUrl: result.baseUrl,
        progress: parsed.progress,
        resultUrl: parsed.resultUrl,
        ...(parsed.lastFrameUrl ? { lastFrameUrl: parsed.lastFrameUrl } : {}),
        failReason: parsed.failReason,
        pollAfterMs,
      };
    } catch (error) {
      if (error instanceof TaskNotFoundError && options.createdAt !== undefined && this.now() - options.createdAt < this.graceMs) {
        return { taskId: ref.taskId, state: 'pending', rawStatus: 'task_not_exist', baseUrl: error.baseUrl ?? this.pool.pick() };
      }
      if (error instanceof TaskNotFoundError && options.createdAt !== undefined) {
        throw new TaskNotFoundError(
          `${error.message}; still missing ${Math.round((this.now() - options.createdAt) / 1000)} s after ` +
            'creation, so it is taken as lost',
          { status: error.status, baseUrl: error.baseUrl, taskId: ref.taskId },
        );
      }
      throw error;
    }
  }

  /**
   * Where a finished video is fetched. A result_url that is this task's content endpoint, on any
   * host, is fetched through the job's own base addresses with the key: new-api builds it from its
   * ServerAddress setting, which often differs from the address clients use. Any other result_url,
   * even on the gateway's own host, is fetched as it is, without the key.
   */
  private targetFor(url: string | undefined, ref: TaskRef): Target {
    const content = openaiContentPath(ref.taskId);
    if (!url) return { path: content };
    let pathname: string | undefined;
    try {
      pathname = new URL(url).pathname;
    } catch {
      throw new DownloadError(`the gateway gave an unusable video address for task ${ref.taskId}`);
    }
    return pathname.endsWith(content) ? { path: content } : { url };
  }

  private async freshTarget(ref: TaskRef): Promise<Target> {
    if (ref.protocol === 'openai') return this.targetFor(undefined, ref);
    const status = await this.getTask({ taskId: ref.taskId, protocol: ref.protocol });
    if (status.state !== 'succeeded') {
      throw new DownloadError(`task ${ref.taskId} is not finished (status ${status.rawStatus || status.state})`, { retryable: true });
    }
    return this.targetFor(status.resultUrl, ref);
  }

  async openVideo(ref: TaskRef, options: { offset?: number; ifRange?: string; signal?: AbortSignal } = {}): Promise<VideoDownload> {
    const target = ref.protocol === 'general' && !ref.resultUrl ? await this.freshTarget(ref) : this.targetFor(ref.resultUrl, ref);
    const context = {
      taskId: ref.taskId,
      signal: options.signal,
      refresh: () => this.freshTarget(ref),
      maxResumes: this.resumeAttempts,
      requestTimeoutMs: this.requestTimeoutMs,
    };
    return openVideoStream(this.engine, target, context, Math.max(0, Math.floor(options.offset ?? 0)), options.ifRange);
  }

  fetchFrameImage(address: string, options: { taskId?: string; signal?: AbortSignal; maxBytes?: number } = {}): Promise<FrameImage> {
    return fetchFrameImage(this.engine, address, options);
  }

  async createMessage(
    input: { model: string; maxTokens: number; system?: string; prompt: string },
    options: { signal?: AbortSignal } = {},
  ): Promise<MessageResult> {
    const body = buildMessagesBody(input);
    const result = await call(this.engine, {
      operation: 'message',
      method: 'POST',
      credential: 'x-api-key',
      model: input.model,
      target: () => ({ path: MESSAGES_PATH }),
      signal: options.signal,
      exchangeTimeoutMs: exchangeTimeoutMs(this.requestTimeoutMs),
      openBody: () => Promise.resolve({ body, headers: MESSAGES_HEADERS }),
      accept: async (response, { baseUrl }) => {
        const json = await readJson(response, 'the message', baseUrl);
        const parsed = parseMessageBody(json, input.model);
        if (!parsed)
          throw new GatewayUnavailableError(`${baseUrl} answered the message without content`, { baseUrl, status: response.status });
        return parsed;
      },
    });
    return { ...result.value, baseUrl: result.baseUrl };
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}

export function createGatewayClient(options: ObservedClientOptions): GatewayClient & { readonly pool: BaseUrlPool } {
  return new Client(options);
}
