// Streaming video download: manual redirects, Authorization only to base-address origins, Range
// resume inside the returned stream, one refresh of an expired result_url.
import { Readable } from 'node:stream';
import { backoffDelay } from './backoff';
import { sleep, type CallerDeps } from './caller';
import { classifyGatewayError, describeError } from './classify';
import type { VideoDownload } from './contract';
import { DownloadError, GatewayAbortedError, GatewayError, GatewayUnavailableError, RateLimitedError } from './errors';
import { discard, header, networkError, readText, type HttpResponse, type ResponseBody } from './http';

export interface DownloadDeps extends CallerDeps {
  apiKey: string;
  /** Origins of the configured base addresses: the only ones that get the key. */
  authOrigins: ReadonlySet<string>;
  bodyTimeoutMs: number;
  resumeAttempts: number;
}

/** Where the bytes are: a path on whichever base is healthy, or a fixed address (CDN, pre-signed). */
export type VideoTarget = { kind: 'gateway'; path: string } | { kind: 'url'; url: string };

export interface OpenContext {
  taskId: string;
  signal?: AbortSignal;
  /** Asks the task again for a fresh address (once per download). */
  refresh?: () => Promise<VideoTarget | undefined>;
}

interface Opened {
  response: HttpResponse;
  finalUrl: URL;
  baseUrl: string;
}

const MAX_REDIRECTS = 5;

/** `https://user:pw@cdn/x.mp4?sig=…` -> `https://cdn/x.mp4`, for the manifest. */
export function sourceOf(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** Parses `bytes 100-199/1000` (total may be `*`). */
export function parseContentRange(value: string | undefined): { start: number; end: number; total?: number } | undefined {
  const m = /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(value?.trim() ?? '');
  if (!m) return undefined;
  const out: { start: number; end: number; total?: number } = { start: Number(m[1]), end: Number(m[2]) };
  if (m[3] !== '*') out.total = Number(m[3]);
  return out;
}

/** A strong ETag or a Last-Modified date, usable in If-Range (weak ETags are not). */
export function rangeValidator(headers: HttpResponse['headers']): string | undefined {
  const etag = header(headers, 'etag');
  if (etag && !etag.startsWith('W/')) return etag;
  return header(headers, 'last-modified');
}

export class VideoFetcher {
  private refreshed = false;

  constructor(private readonly deps: DownloadDeps, private target: VideoTarget, private readonly ctx: OpenContext) {}

  /** One GET (following redirects) of the video from `from`, with failover and bounded retries. */
  async open(from: number, ifRange: string | undefined): Promise<Opened> {
    const { deps } = this;
    const failed = new Set<string>();
    let rateLimits = 0;
    for (let attempt = 0; ; attempt += 1) {
      if (this.ctx.signal?.aborted) throw new GatewayAbortedError();
      const baseUrl = deps.pool.pick(failed);
      const start = this.target.kind === 'gateway' ? new URL(`${baseUrl}${this.target.path}`) : new URL(this.target.url);
      let error: GatewayError;
      try {
        const opened = await this.follow(start, from, ifRange, baseUrl);
        const { status } = opened.response;
        if (status === 200 || status === 206) {
          if (this.target.kind === 'gateway') deps.pool.reportSuccess(baseUrl);
          return opened;
        }
        const text = await readText(opened.response.body, 64 * 1024).catch(() => '');
        const expired = [403, 404, 410].includes(status) && !deps.authOrigins.has(opened.finalUrl.origin);
        if (expired && this.ctx.refresh && !this.refreshed) {
          this.refreshed = true;
          deps.log('info', `video address expired (HTTP ${status}); asking task ${this.ctx.taskId} for a fresh one`);
          const fresh = await this.ctx.refresh();
          if (!fresh) throw new DownloadError(`the video address expired (HTTP ${status}) and the task gave no new one`, { status });
          this.target = fresh;
          attempt -= 1;
          continue;
        }
        if (status === 416 && from > 0) {
          // Our offset is past the end (e.g. the representation changed): start over from 0.
          from = 0;
          ifRange = undefined;
          continue;
        }
        error = classifyGatewayError({ status, body: text, headers: opened.response.headers, baseUrl, operation: 'download',
          taskId: this.ctx.taskId, nowMs: deps.now() });
        if (expired) error = new DownloadError(`the video address expired (HTTP ${status}) and was already refreshed once`, { status });
      } catch (e) {
        if (!(e instanceof GatewayError)) throw e;
        error = e;
      }
      if (error instanceof GatewayAbortedError) throw error;
      if (error instanceof RateLimitedError && rateLimits < deps.limits.maxRateLimitRetries) {
        rateLimits += 1;
        attempt -= 1;
        await sleep(Math.min(deps.limits.maxWaitMs, error.retryAfterMs ?? backoffDelay(rateLimits, { random: deps.random })), this.ctx.signal);
        continue;
      }
      if (!(error instanceof GatewayUnavailableError) || attempt + 1 >= deps.limits.maxAttempts) throw error;
      if (this.target.kind === 'gateway') {
        failed.add(baseUrl);
        deps.pool.reportFailure(baseUrl, error.retryAfterMs ?? 0);
      }
      deps.log('warn', `video fetch failed: ${describeError(error)}; retrying`, { taskId: this.ctx.taskId, attempt });
      const next = deps.pool.pick(failed);
      if (this.target.kind === 'url' || !deps.pool.isHealthy(next)) {
        await sleep(backoffDelay(attempt, { baseMs: 250, maxMs: 5_000, random: deps.random }), this.ctx.signal);
      }
    }
  }

  private async follow(start: URL, from: number, ifRange: string | undefined, baseUrl: string): Promise<Opened> {
    const { deps } = this;
    let url = start;
    for (let hop = 0; ; hop += 1) {
      const headers: Record<string, string> = { accept: 'video/*, application/octet-stream;q=0.9, */*;q=0.5' };
      // The key goes only to the gateway's own origins, re-decided on every hop.
      if (deps.authOrigins.has(url.origin)) headers.authorization = `Bearer ${deps.apiKey}`;
      if (from > 0) {
        headers.range = `bytes=${from}-`;
        if (ifRange) headers['if-range'] = ifRange;
      }
      const response = await deps.transport.send({
        url, method: 'GET', headers, headersTimeoutMs: deps.headersTimeoutMs, bodyTimeoutMs: deps.bodyTimeoutMs,
        ...(this.ctx.signal ? { signal: this.ctx.signal } : {}),
      }, deps.authOrigins.has(url.origin) ? baseUrl : url.origin);
      const location = header(response.headers, 'location');
      if (response.status >= 300 && response.status < 400 && response.status !== 304 && location) {
        discard(response.body);
        if (hop >= MAX_REDIRECTS) throw new DownloadError(`too many redirects fetching the video (last: ${sourceOf(url)})`);
        url = new URL(location, url);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DownloadError('video redirect to a non-http(s) address');
        continue;
      }
      return { response, finalUrl: url, baseUrl };
    }
  }
}

/** Opens the video and wraps it in a stream that resumes after cuts. */
export async function openVideoStream(deps: DownloadDeps, target: VideoTarget, ctx: OpenContext,
  offset: number, ifRange: string | undefined): Promise<VideoDownload> {
  const fetcher = new VideoFetcher(deps, target, ctx);
  const first = await fetcher.open(offset, ifRange);
  const { response } = first;
  let start = 0;
  let total: number | undefined;
  const length = Number(header(response.headers, 'content-length') ?? Number.NaN);
  if (response.status === 206) {
    const range = parseContentRange(header(response.headers, 'content-range'));
    if (!range || range.start !== offset) {
      discard(response.body);
      throw new DownloadError(`the server answered a different range than bytes=${offset}-`, { status: 206 });
    }
    start = range.start;
    total = range.total ?? (Number.isFinite(length) ? start + length : undefined);
  } else if (Number.isFinite(length)) {
    total = length;
  }
  const validator = rangeValidator(response.headers);
  const body = new ResumableBody(fetcher, response.body, {
    position: start, ...(total !== undefined ? { total } : {}),
    ...(validator !== undefined ? { validator } : {}),
    maxResumes: deps.resumeAttempts, log: deps.log, random: deps.random, ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  const contentType = header(response.headers, 'content-type');
  return {
    ...(validator !== undefined ? { validator } : {}),
    body, offset: start, baseUrl: first.baseUrl, source: sourceOf(first.finalUrl),
    ...(total !== undefined ? { totalBytes: total } : {}), ...(contentType !== undefined ? { contentType } : {}),
  };
}

interface ResumeOptions {
  position: number;
  total?: number;
  validator?: string;
  maxResumes: number;
  log: CallerDeps['log'];
  random: () => number;
  signal?: AbortSignal;
}

/**
 * The bytes of one download as a single Readable. A cut (reset, stall, short body) reopens the
 * video at the current position with Range + If-Range; if the server then sends the whole file
 * again, the bytes already delivered are skipped, so the consumer never sees a seam.
 */
export class ResumableBody extends Readable {
  private source: ResponseBody | undefined;
  private position: number;
  private skip = 0;
  private resumes = 0;
  private readonly options: ResumeOptions;

  constructor(private readonly fetcher: VideoFetcher, first: ResponseBody, options: ResumeOptions) {
    super({ highWaterMark: 1 << 20 });
    this.options = options;
    this.position = options.position;
    this.attach(first);
  }

  get bytesDelivered(): number {
    return this.position - this.options.position;
  }

  private attach(source: ResponseBody): void {
    this.source = source;
    source.on('data', (chunk: Buffer) => {
      if (this.skip > 0) {
        if (chunk.length <= this.skip) {
          this.skip -= chunk.length;
          return;
        }
        chunk = chunk.subarray(this.skip);
        this.skip = 0;
      }
      this.position += chunk.length;
      if (!this.push(chunk)) source.pause();
    });
    source.once('end', () => {
      if (source !== this.source) return;
      const { total } = this.options;
      if (total !== undefined && this.position < total) {
        this.cut(new Error(`body ended at byte ${this.position} of ${total}`));
        return;
      }
      this.push(null);
    });
    source.on('error', (error) => {
      if (source === this.source) this.cut(error);
    });
  }

  override _read(): void {
    this.source?.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const source = this.source;
    this.source = undefined;
    source?.destroy();
    callback(error);
  }

  private cut(reason: unknown): void {
    if (this.destroyed) return;
    this.source?.destroy();
    this.source = undefined;
    if (this.options.signal?.aborted) {
      this.destroy(new GatewayAbortedError());
      return;
    }
    this.resumes += 1;
    if (this.resumes > this.options.maxResumes) {
      this.destroy(new DownloadError(`download cut at byte ${this.position} and not resumable after ${this.options.maxResumes} attempts: `
        + describeError(reason), { bytesReceived: this.bytesDelivered, cause: reason }));
      return;
    }
    this.options.log('info', `download cut at byte ${this.position} (${describeError(reason)}); resuming`, { attempt: this.resumes });
    void this.reopen(reason);
  }

  private async reopen(reason: unknown): Promise<void> {
    try {
      await sleep(backoffDelay(this.resumes - 1, { baseMs: 100, maxMs: 2_000, random: this.options.random }), this.options.signal);
      const { response } = await this.fetcher.open(this.position, this.options.validator);
      if (this.destroyed) {
        discard(response.body);
        return;
      }
      if (response.status === 206) {
        const range = parseContentRange(header(response.headers, 'content-range'));
        if (!range || range.start !== this.position) {
          discard(response.body);
          throw new DownloadError(`resume asked for bytes=${this.position}- and got ${range ? `${range.start}-` : 'no range'}`);
        }
      } else {
        const validator = rangeValidator(response.headers);
        if (this.options.validator && validator && validator !== this.options.validator) {
          discard(response.body);
          throw new DownloadError('the video changed on the server during the download');
        }
        // Whole file again: drop what the consumer already has.
        this.skip = this.position;
      }
      this.attach(response.body);
    } catch (error) {
      const wrapped = error instanceof GatewayError ? error
        : networkError(error, { baseUrl: '', requestSent: true, ...(this.options.signal ? { signal: this.options.signal } : {}) });
      this.destroy(wrapped instanceof GatewayError && !(wrapped instanceof GatewayUnavailableError) ? wrapped
        : new DownloadError(`download cut at byte ${this.position} (${describeError(reason)}) and resuming failed: ${describeError(wrapped)}`,
          { bytesReceived: this.bytesDelivered, cause: wrapped }));
    }
  }
}
