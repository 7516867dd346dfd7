// One undici Agent per client: keep-alive pools per origin, explicit connect/headers/body timeouts.
// A small interceptor records whether undici handed the request to a socket, which is what
// separates "provably not sent" (safe to retry a create) from "may have been processed".
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { CauseSummary, GatewayAbortedError, GatewayError, GatewayUnavailableError } from './errors';
import { checkConnection } from './key-route';
import { CONNECT_TIMEOUT_MS } from './budget';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../jobfile/values';
import { redact } from './redact';

export interface TransportOptions {
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  /** Max sockets per origin. */
  connections?: number;
}

export type RequestBody = string | Buffer | Uint8Array | Readable | AsyncIterable<Uint8Array> | null;

export interface SendOptions {
  url: URL;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: RequestBody;
  signal?: AbortSignal;
}

export type ResponseBody = Dispatcher.ResponseData['body'];

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: ResponseBody;
}

interface Probe {
  /** undici assigned the request to a socket and began writing it. */
  started: boolean;
}

const probes = new WeakMap<object, Probe>();

class ProbeHandler implements Dispatcher.DispatchHandler {
  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly probe: Probe,
  ) {}
  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.probe.started = true;
    this.inner.onRequestStart?.(controller, context);
  }
  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.inner.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }
  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }
  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.inner.onResponseEnd?.(controller, trailers);
  }
  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.inner.onResponseError?.(controller, error);
  }
}

const probeInterceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const probe = probes.get(opts);
  return dispatch(opts, probe ? new ProbeHandler(handler, probe) : handler);
};

/** Errors that happen before a request can reach any server. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'UND_ERR_CONNECT_TIMEOUT',
  'EPROTO',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const nested = (error as { errors?: unknown[] } | null)?.errors?.[0];
  return nested ? errorCode(nested) : undefined;
}

function isTlsCode(code: string | undefined): boolean {
  return code !== undefined && (code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code.startsWith('CERT_'));
}

const DESCRIPTIONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'DNS lookup failed',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no response within the request timeout',
  UND_ERR_BODY_TIMEOUT: 'the response body stalled',
  UND_ERR_SOCKET: 'the connection was closed',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed while sending',
};

/** Wraps a network-level failure: redacted, no undici object attached, `requestSent` decided by the probe. */
export function networkError(error: unknown, context: { baseUrl: string; requestSent: boolean; signal?: AbortSignal }): Error {
  const code = errorCode(error);
  if (context.signal?.aborted || code === 'UND_ERR_ABORTED' || (error as Error | null)?.name === 'AbortError') {
    return new GatewayAbortedError('the request was aborted', { baseUrl: context.baseUrl, cause: error });
  }
  const notSent = !context.requestSent || (code !== undefined && NOT_SENT_CODES.has(code)) || isTlsCode(code);
  const what = (code && DESCRIPTIONS[code]) ?? redact((error as Error | null)?.message ?? String(error));
  const when = notSent ? 'before the request was sent' : 'after the request was sent';
  return new GatewayUnavailableError(`${context.baseUrl}: ${what}${code ? ` (${code})` : ''} ${when}`, {
    baseUrl: context.baseUrl,
    code,
    requestSent: !notSent,
    cause: new CauseSummary(error),
  });
}

/** `http:` + `[::1]` + `8080` as URL.origin writes it (default ports dropped). */
function connectionOrigin(options: buildConnector.Options): string | undefined {
  const host = options.hostname.includes(':') && !options.hostname.startsWith('[') ? `[${options.hostname}]` : options.hostname;
  try {
    return new URL(`${options.protocol}//${host}${options.port ? `:${options.port}` : ''}`).origin;
  } catch {
    return undefined;
  }
}

/**
 * undici's connector, with every connection checked once made and before a byte is sent on it:
 * where the key goes as the user's own loopback listener, the other end must be the user's
 * (gateway/key-route.ts). A refused connection is closed and fails its request as not sent.
 */
export function keyCheckedConnector(timeout: number): buildConnector.connector {
  const connect = buildConnector({ timeout });
  return (options, callback) => {
    connect(options, (error, socket) => {
      if (error || !socket) return callback(error ?? new Error('no socket'), null);
      const origin = connectionOrigin(options);
      if (origin === undefined) return callback(null, socket);
      checkConnection(origin, socket).then(
        () => callback(null, socket),
        (refused: Error) => {
          socket.destroy();
          callback(refused, null);
        },
      );
    });
  };
}

export class HttpTransport {
  private readonly agent: Agent;
  private readonly dispatcher: Dispatcher;

  constructor(options: TransportOptions = {}) {
    this.agent = new Agent({
      connect: keyCheckedConnector(options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS),
      headersTimeout: options.headersTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      bodyTimeout: options.bodyTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000,
      keepAliveMaxTimeout: 60_000,
      connections: options.connections ?? 128,
    });
    this.dispatcher = this.agent.compose(probeInterceptor);
  }

  /**
   * Sends one request. Resolves with any HTTP status (the body must be consumed or destroyed);
   * rejects only with GatewayUnavailableError / GatewayAbortedError from `networkError`.
   */
  async send(options: SendOptions, baseUrl: string): Promise<HttpResponse> {
    const probe: Probe = { started: false };
    const opts: Dispatcher.RequestOptions = {
      origin: options.url.origin,
      path: `${options.url.pathname}${options.url.search}`,
      method: options.method,
      headers: options.headers ?? {},
      body: (options.body ?? null) as Dispatcher.DispatchOptions['body'],
      // 1 MiB read buffers: with undici's default the body stream stalls on small chunks and a
      // 1 GiB download ran at ~0.4x curl; JSON answers are far smaller, so nothing changes for them.
      highWaterMark: 1 << 20,
      signal: options.signal,
    };
    probes.set(opts, probe);
    try {
      const response = await this.dispatcher.request(opts);
      return { status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      // An error the body raised itself (a reference file that changed or failed while it was being
      // read): the request was cut off before its end, so no gateway can have acted on it, and the
      // error already says what went wrong and whether it is final.
      if (error instanceof GatewayError) throw error;
      throw networkError(error, { baseUrl, requestSent: probe.started, signal: options.signal });
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  async destroy(): Promise<void> {
    await this.agent.destroy();
  }
}

/** Reads a body as text, at most `limit` bytes (error pages can be large); the rest is dropped. */
export async function readText(body: ResponseBody, limit = 1 << 20): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size + chunk.length > limit) {
      chunks.push(chunk.subarray(0, limit - size));
      size = limit;
      discard(body);
      break;
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

const noop = (): void => undefined;

/**
 * Drops a body we do not need. Small ones are drained so the connection stays reusable; undici
 * emits an abort error on a destroyed body, which is swallowed here.
 */
export function discard(body: ResponseBody): void {
  body.on('error', noop);
  body.dump({ limit: 64 * 1024 }).catch(noop);
}

/** `https://user:pw@cdn/x.mp4?sig=…` -> `https://cdn/x.mp4`: an address fit for messages and the manifest. */
export function sourceOf(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
