// Streaming video download. Each opening of the video is one call of the retry engine (failover,
// retries, redirects, the key only to base-address origins); this file adds what is particular to
// videos: Range from an offset, one refresh of an expired address, and resuming after a cut inside
// the returned stream.
import { Readable } from 'node:stream';
import { describeError } from './classify';
import type { GatewayLog, VideoDownload } from './contract';
import { DownloadError, GatewayAbortedError, GatewayError, GatewayUnavailableError } from './errors';
import { discard, header, sourceOf, type HttpResponse, type ResponseBody } from './http';
import { call, type Engine, type Target } from './retry';
import { checkVideoStart } from './video-check';

export interface VideoContext {
  taskId: string;
  signal?: AbortSignal;
  /** Asks the task for a fresh address; used once per download. */
  refresh: () => Promise<Target>;
  /** Cuts the body resumes after before it gives up. */
  maxResumes: number;
  /** The job's request_timeout: the stall rule's window is three of them (docs/limits-downloads.md). */
  requestTimeoutMs: number;
}

/**
 * The stall rule (docs/limits-downloads.md). undici ends a body only after a silence of
 * request_timeout, so a server sending one byte a second holds a download for ever. A body must also
 * bring at least 64 KiB per 30 s (about 2.2 KB/s) on average over every window of three
 * request_timeouts, checked each third of a window: a stalled body ends within four request_timeouts
 * and is resumed with Range. Far below any real link's speed, so a slow but steady video is never
 * cut; time the consumer holds the body back (a slow disk or upload) does not count.
 */
export const MIN_BODY_BYTES_PER_SECOND = (64 * 1024) / 30;
const WINDOW_REQUEST_TIMEOUTS = 3;
const CHECKS_PER_WINDOW = 3;

export function stallWindowMs(requestTimeoutMs: number): number {
  return WINDOW_REQUEST_TIMEOUTS * requestTimeoutMs;
}

/** Counts a body's bytes per third of a window; says when a full window brought too few. */
class StallWatch {
  private readonly windowMs: number;
  private readonly needed: number;
  /** Bytes of the last complete thirds (oldest first), and of the current one. */
  private thirds: number[] = [];
  private current = 0;
  /** The consumer holds the body back now / did at some time during the current third. */
  private held = false;
  private heldThisThird = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    requestTimeoutMs: number,
    private readonly flowing: () => boolean,
    private readonly onStall: (reason: Error) => void,
  ) {
    this.windowMs = stallWindowMs(requestTimeoutMs);
    this.needed = Math.ceil((MIN_BODY_BYTES_PER_SECOND * this.windowMs) / 1000);
    this.timer = setInterval(() => this.check(), this.windowMs / CHECKS_PER_WINDOW);
    this.timer.unref();
  }

  /** The hot path: one addition per chunk. */
  bytes(n: number): void {
    this.current += n;
  }

  holdBack(held: boolean): void {
    this.held = held;
    if (held) this.heldThisThird = true;
  }

  /** A new opening (after a cut): its window starts now. */
  restart(): void {
    this.thirds = [];
    this.current = 0;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private check(): void {
    const excused = this.held || this.heldThisThird || !this.flowing();
    this.heldThisThird = false;
    if (excused) {
      this.restart();
      return;
    }
    this.thirds.push(this.current);
    this.current = 0;
    if (this.thirds.length > CHECKS_PER_WINDOW) this.thirds.shift();
    if (this.thirds.length < CHECKS_PER_WINDOW) return;
    const got = this.thirds.reduce((a, b) => a + b, 0);
    if (got < this.needed) {
      this.restart();
      this.onStall(
        new Error(`the body stalled: ${got} bytes in the last ${this.windowMs / 1000} s, below the ${this.needed} a download must keep`),
      );
    }
  }
}

interface Opened {
  response: HttpResponse;
  /** The address the bytes come from, after redirects. */
  url: URL;
  /** The base address it came through; absent when it came from an address the gateway handed out. */
  baseUrl?: string;
}

/** Parses `bytes 100-199/1000` (total may be `*`). */
export function parseContentRange(value: string | undefined): { start: number; end: number; total?: number } | undefined {
  const m = /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(value?.trim() ?? '');
  if (!m) return undefined;
  return { start: Number(m[1]), end: Number(m[2]), total: m[3] === '*' ? undefined : Number(m[3]) };
}

/** A strong ETag or a Last-Modified date, usable in If-Range (weak ETags are not). */
export function rangeValidator(headers: HttpResponse['headers']): string | undefined {
  const etag = header(headers, 'etag');
  if (etag && !etag.startsWith('W/')) return etag;
  return header(headers, 'last-modified');
}

/** One download's video: where it is now, and how to open it from a byte offset. */
class Video {
  private refreshed = false;

  constructor(
    private readonly engine: Engine,
    private target: Target,
    private readonly ctx: VideoContext,
  ) {}

  /** Opens the video from byte `from` (If-Range `ifRange`, when known): one engine call. */
  async open(from: number, ifRange: string | undefined): Promise<Opened> {
    let offset = from;
    let validator = ifRange;
    const result = await call(this.engine, {
      operation: 'download',
      method: 'GET',
      credential: 'bearer',
      followRedirects: true,
      taskId: this.ctx.taskId,
      signal: this.ctx.signal,
      target: () => this.target,
      headers: () => {
        const headers: Record<string, string> = { accept: 'video/*, application/octet-stream;q=0.9, */*;q=0.5' };
        if (offset > 0) headers.range = `bytes=${offset}-`;
        if (offset > 0 && validator) headers['if-range'] = validator;
        return headers;
      },
      accept: (response, at) => {
        if (response.status !== 200 && response.status !== 206) {
          throw new DownloadError(`the video could not be fetched (HTTP ${response.status} from ${sourceOf(at.url)})`, {
            status: response.status,
            retryable: false,
          });
        }
        return Promise.resolve({ response, url: at.url });
      },
      reject: async (status, at) => {
        // Refused by an address outside the gateway: a signed URL that expired. The task gives a new one, once.
        if ([403, 404, 410].includes(status) && !this.engine.authOrigins.has(at.url.origin)) {
          if (this.refreshed)
            throw new DownloadError(`the video address expired (HTTP ${status}) and was already refreshed once`, { status });
          this.refreshed = true;
          this.engine.log('info', `video address expired (HTTP ${status}); asking task ${this.ctx.taskId} for a fresh one`);
          this.target = await this.ctx.refresh();
          return 'again';
        }
        if (status === 416 && offset > 0) {
          // Our offset is past the end (e.g. the representation changed): start over from 0.
          offset = 0;
          validator = undefined;
          return 'again';
        }
        return undefined;
      },
    });
    return { ...result.value, baseUrl: 'path' in this.target ? result.baseUrl : undefined };
  }
}

/** Opens the video and wraps it in a stream that resumes after cuts. */
export async function openVideoStream(
  engine: Engine,
  target: Target,
  ctx: VideoContext,
  offset: number,
  ifRange: string | undefined,
): Promise<VideoDownload> {
  const video = new Video(engine, target, ctx);
  const first = await video.open(offset, ifRange);
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
  if (start === 0) await checkVideoStart(response, sourceOf(first.url));
  const validator = rangeValidator(response.headers);
  const body = new ResumableBody(video, response.body, {
    position: start,
    total,
    validator,
    maxResumes: ctx.maxResumes,
    requestTimeoutMs: ctx.requestTimeoutMs,
    log: engine.log,
    signal: ctx.signal,
  });
  return {
    body,
    offset: start,
    totalBytes: total,
    validator,
    baseUrl: first.baseUrl,
    source: sourceOf(first.url),
    contentType: header(response.headers, 'content-type'),
  };
}

interface ResumeOptions {
  position: number;
  total: number | undefined;
  validator: string | undefined;
  maxResumes: number;
  requestTimeoutMs: number;
  log: GatewayLog;
  signal: AbortSignal | undefined;
}

function leftToTheConsumer(): void {}

/**
 * The bytes of one download as a single Readable. A cut (reset, stall, short body) reopens the
 * video at the current position with Range + If-Range; if the server then sends the whole file
 * again, the bytes already delivered are skipped, so the consumer never sees a seam.
 */
class ResumableBody extends Readable {
  private source: ResponseBody | undefined;
  private position: number;
  private skip = 0;
  private resumes = 0;
  private readonly options: ResumeOptions;
  private readonly stall: StallWatch;

  constructor(
    private readonly video: Video,
    first: ResponseBody,
    options: ResumeOptions,
  ) {
    super({ highWaterMark: 1 << 20 });
    // The body downloads before its consumer reads (a video up to the buffer's size, all of it)
    // while the consumer prepares where the bytes go. An error in that time stays in the stream,
    // which gives it to the consumer when it reads or waits for it (stream.finished); without a
    // listener, the emit would end the process, and every download in it.
    this.on('error', leftToTheConsumer);
    this.options = options;
    this.position = options.position;
    this.stall = new StallWatch(
      options.requestTimeoutMs,
      () => this.source !== undefined,
      (reason) => this.cut(reason),
    );
    this.attach(first);
  }

  get bytesDelivered(): number {
    return this.position - this.options.position;
  }

  private attach(source: ResponseBody): void {
    this.source = source;
    this.stall.restart();
    source.on('data', (chunk: Buffer) => {
      this.stall.bytes(chunk.length);
      if (this.skip > 0) {
        if (chunk.length <= this.skip) {
          this.skip -= chunk.length;
          return;
        }
        chunk = chunk.subarray(this.skip);
        this.skip = 0;
      }
      this.position += chunk.length;
      if (!this.push(chunk)) {
        source.pause();
        this.stall.holdBack(true);
      }
    });
    source.once('end', () => {
      if (source !== this.source) return;
      const { total } = this.options;
      if (total !== undefined && this.position < total) {
        this.cut(new Error(`body ended at byte ${this.position} of ${total}`));
        return;
      }
      this.stall.stop();
      this.push(null);
    });
    source.on('error', (error) => {
      if (source === this.source) this.cut(error);
    });
  }

  override _read(): void {
    this.stall.holdBack(false);
    this.source?.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.stall.stop();
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
      this.destroy(
        new DownloadError(
          `download cut at byte ${this.position} and not resumable after ${this.options.maxResumes} attempts: ` + describeError(reason),
          { bytesReceived: this.bytesDelivered, cause: reason },
        ),
      );
      return;
    }
    this.options.log('info', `download cut at byte ${this.position} (${describeError(reason)}); resuming`, { attempt: this.resumes });
    void this.reopen(reason);
  }

  private async reopen(reason: unknown): Promise<void> {
    try {
      // At once: a cut is not a refusal, and the engine backs off if the reopening fails.
      const { response } = await this.video.open(this.position, this.options.validator);
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
      // A final answer (key refused, video gone or changed, abort) ends the download as it is.
      this.destroy(
        error instanceof GatewayError && !(error instanceof GatewayUnavailableError)
          ? error
          : new DownloadError(
              `download cut at byte ${this.position} (${describeError(reason)}) and resuming failed: ${describeError(error)}`,
              { bytesReceived: this.bytesDelivered, cause: error },
            ),
      );
    }
  }
}
