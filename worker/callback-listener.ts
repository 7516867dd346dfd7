// The callback listener (`--callbacks HOST:PORT`, docs/callbacks.md). A provider behind the gateway
// calls the address a create carried when the task changes state. The call is a hint and nothing
// more: its token (gateway/callback-token.ts) names the item's render workflow, which is signalled
// and then checks the task through the gateway; the body's status and video address are never
// believed. Bodies, tokens and rates are bounded, so the listener costs little however it is called.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyCallbackToken, MAX_TOKEN_CHARS } from '../gateway/callback-token';

/** Providers' callback bodies are a task's JSON: a few KiB. */
export const MAX_CALLBACK_BODY_BYTES = 64 * 1024;
/** Per token: a short burst (duplicates, a status change or two), then one every 10 s. */
const PER_TOKEN = { burst: 5, perSecond: 0.1 };
/** All tokens together: what a fleet's renders can send, far below what a flood would. */
const GLOBAL = { burst: 200, perSecond: 50 };
/** Tokens whose rates are remembered; the oldest is forgotten first. */
const TOKENS_REMEMBERED = 10_000;
/**
 * Statuses a provider reports while the task is unfinished (Seedance: queued, running): no check is
 * asked, since it would find the task unfinished. A body cannot make reelflow believe anything by
 * this: a wrong one only leaves the render to its next check (polling.backstop).
 */
const UNFINISHED = new Set(['queued', 'running', 'pending', 'submitted', 'in_progress', 'processing', 'not_start']);

/** What signalling the item's workflow came to: `gone` when no such workflow runs. */
export type SignalOutcome = 'signalled' | 'gone';

export interface CallbackListenerOptions {
  host: string;
  port: number;
  secret: Buffer;
  signal(workflowId: string): Promise<SignalOutcome>;
  /** One line per problem worth an operator's eye (a signal that failed); never a body. */
  warn(message: string): void;
}

export interface CallbackListener {
  /** Where it listens: `http://127.0.0.1:8790`. */
  url: string;
  close(): Promise<void>;
}

class Bucket {
  private tokens: number;
  private at = Date.now();
  constructor(private readonly rate: { burst: number; perSecond: number }) {
    this.tokens = rate.burst;
  }
  take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.rate.burst, this.tokens + ((now - this.at) / 1000) * this.rate.perSecond);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

function answer(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify({ message: text }));
}

/** The body, at most MAX_CALLBACK_BODY_BYTES; undefined (and the request cut) when longer. */
function boundedBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_CALLBACK_BODY_BYTES) return resolve(undefined);
    const chunks: Buffer[] = [];
    let length = 0;
    req.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > MAX_CALLBACK_BODY_BYTES) {
        req.removeAllListeners('data');
        req.pause();
        resolve(undefined);
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The status a body claims, lower-cased, when it is JSON with one; only ever used to skip a check. */
export function claimedStatus(body: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const record = parsed as Record<string, unknown>;
    const data = typeof record.data === 'object' && record.data !== null ? (record.data as Record<string, unknown>) : {};
    const status = record.status ?? data.status;
    return typeof status === 'string' ? status.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** The token: the last segment of the path, so an ingress may put the listener under any prefix. */
function tokenOf(url: string | undefined): string {
  const path = (url ?? '').split('?')[0] ?? '';
  return path.slice(path.lastIndexOf('/') + 1);
}

export async function startCallbackListener(options: CallbackListenerOptions): Promise<CallbackListener> {
  const global = new Bucket(GLOBAL);
  const perToken = new Map<string, Bucket>();
  const bucketOf = (workflowId: string): Bucket => {
    let bucket = perToken.get(workflowId);
    if (bucket) return bucket;
    bucket = new Bucket(PER_TOKEN);
    perToken.set(workflowId, bucket);
    if (perToken.size > TOKENS_REMEMBERED) perToken.delete(perToken.keys().next().value as string);
    return bucket;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST') return answer(res, 405, 'callbacks are POSTed');
    if (!global.take()) return answer(res, 429, 'too many callbacks');
    const token = tokenOf(req.url);
    const workflowId = token.length <= MAX_TOKEN_CHARS ? verifyCallbackToken(options.secret, token) : undefined;
    if (workflowId === undefined) return answer(res, 401, 'unknown callback token');
    if (!bucketOf(workflowId).take()) return answer(res, 429, 'too many callbacks for this token');
    const body = await boundedBody(req);
    if (body === undefined) return answer(res, 413, `a callback body is at most ${MAX_CALLBACK_BODY_BYTES} bytes`);
    const claimed = claimedStatus(body);
    if (claimed !== undefined && UNFINISHED.has(claimed)) return answer(res, 200, 'noted; the task is checked when it says it ended');
    const outcome = await options.signal(workflowId);
    if (outcome === 'gone') return answer(res, 404, 'no render waits for this callback');
    return answer(res, 200, 'the render checks its task now');
  };

  const server: Server = createServer((req, res) => {
    // Unread bodies of refused requests are dropped with the connection (`connection: close`).
    handle(req, res).catch((error: unknown) => {
      options.warn(`a callback could not be passed on: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) answer(res, 503, 'try again later');
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  server.maxHeadersCount = 50;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const shown = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${shown}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
