// The surface the activities use. gateway/ implements it; nothing here imports Temporal.
import type { Readable } from 'node:stream';
import type { Protocol, RenderRequest } from '../jobfile/plan';
import type { FrameImage } from './frame-image';

/**
 * `unknown` is the gateway's own UNKNOWN status (e.g. a freshly created task): not terminal, keep
 * polling. Only `succeeded` and `failed` are terminal.
 */
export type TaskState = 'pending' | 'running' | 'succeeded' | 'failed' | 'unknown';

export interface ServedBy {
  /** The normalised base address that answered. */
  baseUrl: string;
}

export interface CreatedTask extends ServedBy {
  taskId: string;
  /** The create requests actually sent for this call (1 unless a provably-unprocessed attempt was retried). */
  attempts: number;
  /** What the gateway said the create cost, USD (gateway/billed.ts), when it says. */
  billedUsd?: number;
}

export interface TaskStatus extends ServedBy {
  taskId: string;
  state: TaskState;
  /** 0..100 when the gateway reported it. */
  progress?: number;
  /** Only on success and only when it parses as an http(s) URL: result_url, else fail_reason (new-api v0.10.0 puts it there). */
  resultUrl?: string;
  /**
   * The provider's last frame of the video (`content.last_frame_url`, asked for with
   * metadata.return_last_frame; docs/chains.md): only on success, only an http(s) URL of sane length.
   */
  lastFrameUrl?: string;
  /** Failure reason (fail_reason, error.message, or result_url on failure), with the upstream's data.error added when the gateway passes it on. */
  failReason?: string;
  /** Server hint for the next check (openai-poll-after-ms or Retry-After), in ms. */
  pollAfterMs?: number;
  /** The raw status string, for display. */
  rawStatus: string;
}

export interface TaskRef {
  taskId: string;
  protocol: Protocol;
  /** Known video address (general protocol result_url). */
  resultUrl?: string;
}

/** `baseUrl` is absent when the bytes came from an address the gateway handed out (a CDN's result_url). */
export interface VideoDownload extends Partial<ServedBy> {
  /** Bytes from `offset` on. Resumes internally with Range after a cut; errors if it cannot. */
  body: Readable;
  /** Total size of the whole video when the server said (Content-Length / Content-Range). */
  totalBytes?: number;
  contentType?: string;
  /** The offset the body starts at (may be 0 even if an offset was asked, when the server ignored Range). */
  offset: number;
  /** The address the bytes came from (credentials and query strings stripped), for the manifest. */
  source: string;
  /** Strong ETag or Last-Modified of the video: pass it back as `ifRange` when resuming later. */
  validator?: string;
}

export interface MessageResult extends ServedBy {
  text: string;
  model: string;
  stopReason?: string;
  usage?: { inputTokens?: number; outputTokens?: number };
}

export interface GatewayClientOptions {
  /** Base addresses as the user wrote them; normalised by the client (one warning each). */
  baseUrls: string[];
  /** The key itself. Held in memory only; never logged, never in an error. */
  apiKey: string;
  requestTimeoutMs?: number;
  /** Creation policy: docs/protocol.md §6. */
  createRetries?: 'safe' | 'always';
  /** Grace period for task_not_exist after creation, ms (default 60 000). */
  notExistGraceMs?: number;
  /** Name of the environment variable the key came from (never the key): named in the 401 message. */
  apiKeyEnv?: string;
  /** TCP/TLS connect timeout per attempt, ms (default 10 000). */
  connectTimeoutMs?: number;
  /** Failed attempts per call (5xx, network, unreadable answers; default max(6, 2 x bases + 2)). See gateway/retry.ts. */
  maxAttempts?: number;
  /** Wall time of one call, ms: no retry wait runs past it, no attempt starts after it (default 120 000). */
  failoverDeadlineMs?: number;
  /** 429 retries per call on the same base (default 8). */
  maxRateLimitRetries?: number;
  /** Cap on one Retry-After or backoff wait, ms (default 60 000). */
  maxRetryAfterMs?: number;
  /** First cooldown of a failing base, ms (default 5 000); doubles per failure in a row. */
  cooldownMs?: number;
  /** Cooldown cap, ms (default 120 000). */
  maxCooldownMs?: number;
  /** Cuts one openVideo body resumes after (default 5). */
  downloadResumeAttempts?: number;
  /** Clock, epoch ms (tests). */
  now?: () => number;
  /**
   * Whether result_urls, redirects and remote references may point at private, loopback or
   * link-local addresses. Default: when a base address is on such a network itself.
   */
  allowPrivateTargets?: boolean;
  /** Warnings (normalisation) and retry/failover notes; already redacted. */
  log?: GatewayLog;
}

export type GatewayLog = (level: 'debug' | 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;

export interface GatewayClient {
  readonly baseUrls: readonly string[];
  createTask(request: RenderRequest, options?: { signal?: AbortSignal }): Promise<CreatedTask>;
  /** `createdAt` (epoch ms) lets the client apply the task_not_exist grace period. */
  getTask(ref: TaskRef, options?: { createdAt?: number; signal?: AbortSignal }): Promise<TaskStatus>;
  /** Opens the finished video. On 403/404/410 from an expired result_url it asks the task once for a fresh one. */
  openVideo(ref: TaskRef, options?: { offset?: number; ifRange?: string; signal?: AbortSignal }): Promise<VideoDownload>;
  /** The last frame a task's status named (lastFrameUrl): a PNG or JPEG, bounded, fetched as a result_url is (gateway/frame-image.ts). */
  fetchFrameImage(address: string, options?: { taskId?: string; signal?: AbortSignal; maxBytes?: number }): Promise<FrameImage>;
  createMessage(
    input: { model: string; maxTokens: number; system?: string; prompt: string },
    options?: { signal?: AbortSignal },
  ): Promise<MessageResult>;
  close(): Promise<void>;
}
