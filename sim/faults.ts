// Fault decisions and the responses they produce. Every decision draws from its own seeded stream
// (see prng.ts) so a run replays exactly for a given seed and request order.
import type { ServerResponse } from 'node:http';
import type { EndpointKind, SimFaultsExt } from './config';
import type { Dice } from './prng';
import { anthropicError, nginxPage, openaiError, sendJson, sendText } from './http';
import { wrappedUpstreamError, type LitellmKind } from './litellm-errors';
import type { SimProfile } from './profile';

export type RateLimitKind = 'retry-after-seconds' | 'retry-after-date' | 'no-retry-after' | 'empty';
const RATE_LIMIT_KINDS: RateLimitKind[] = ['retry-after-seconds', 'retry-after-date', 'no-retry-after', 'empty'];

export type Fault =
  | { kind: 'reset'; when: 'before-read' | 'after-read' }
  | { kind: 'rate-limit'; variant: RateLimitKind }
  | { kind: 'error'; status: number; html: boolean };

export class FaultEngine {
  faults: SimFaultsExt;
  private rotation = 0;

  constructor(
    initial: SimFaultsExt | undefined,
    private readonly dice: Dice,
  ) {
    this.faults = { ...initial };
  }

  /** Runtime switch: fields given replace the current ones; the rest stay. */
  merge(f: SimFaultsExt): void {
    this.faults = { ...this.faults, ...f };
  }

  private inScope(kind: EndpointKind): boolean {
    const scope = this.faults.scope;
    return !scope || scope.length === 0 || scope.includes(kind);
  }

  slowMs(kind: EndpointKind): number {
    return this.inScope(kind) ? (this.faults.slowMs ?? 0) : 0;
  }

  /** The request-level fault for this request, if any. */
  decide(kind: EndpointKind): Fault | null {
    if (!this.inScope(kind)) return null;
    const f = this.faults;
    if (this.dice.chance('reset', f.resetRate)) {
      const w = f.resetWhen ?? 'mixed';
      const when = w === 'mixed' ? (this.dice.next('reset-when') < 0.5 ? 'before-read' : 'after-read') : w;
      return { kind: 'reset', when };
    }
    if (this.dice.chance('rate-limit', f.rateLimitRate)) {
      const k = f.rateLimitKind ?? 'mixed';
      // Rotation rather than dice for 'mixed': a handful of 429s is enough to see every variant.
      const variant = k === 'mixed' ? (RATE_LIMIT_KINDS[this.rotation++ % RATE_LIMIT_KINDS.length] as RateLimitKind) : k;
      return { kind: 'rate-limit', variant };
    }
    if (this.dice.chance('error', f.errorRate)) {
      const statuses = f.errorStatuses && f.errorStatuses.length > 0 ? f.errorStatuses : [500, 502, 503, 504];
      const status = this.dice.pick('error-status', statuses);
      const b = f.errorBody ?? 'mixed';
      const html = status !== 529 && (b === 'html' || (b === 'mixed' && this.dice.next('error-body') < 0.5));
      return { kind: 'error', status, html };
    }
    return null;
  }

  lostCreate(): boolean {
    return this.dice.chance('lost-create', this.faults.lostCreateRate);
  }

  /** Byte offset (within the bytes to send) at which to cut this download, or null. */
  cutAt(length: number): number | null {
    if (length < 2 || !this.dice.chance('cut-download', this.faults.cutDownloadRate)) return null;
    return Math.max(1, Math.floor(length * (0.1 + 0.8 * this.dice.next('cut-offset'))));
  }

  streamError(): boolean {
    return this.dice.chance('stream-error', this.faults.streamErrorRate);
  }
}

const RETRY_AFTER_S = 1;

export function sendRateLimited(res: ServerResponse, variant: RateLimitKind, messages: boolean, profile: SimProfile = 'default'): void {
  if (variant === 'empty') {
    res.writeHead(429, { 'content-length': 0 });
    res.end();
    return;
  }
  const headers: Record<string, string> = {};
  if (variant === 'retry-after-seconds') headers['retry-after'] = String(RETRY_AFTER_S);
  if (variant === 'retry-after-date') {
    // HTTP dates have one-second resolution: round up so the client never retries early.
    headers['retry-after'] = new Date(Math.ceil(Date.now() / 1000) * 1000 + RETRY_AFTER_S * 1000).toUTCString();
  }
  const body = messages
    ? anthropicError('rate_limit_error', 'Number of requests has exceeded your rate limit')
    : profile === 'litellm'
      ? wrappedUpstreamError(
          429,
          'RateLimitError',
          { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' },
          undefined,
        )
      : openaiError('Rate limit exceeded for token group, please try again later', 'new_api_error', 'rate_limit_exceeded');
  sendJson(res, 429, body, headers);
}

/** LiteLLM's exception for an upstream status (only the 500 was observed; the others follow its exception mapping). */
const LITELLM_KIND: Record<number, LitellmKind> = { 503: 'ServiceUnavailableError', 504: 'Timeout' };

export function sendInjectedError(
  res: ServerResponse,
  status: number,
  html: boolean,
  messages: boolean,
  profile: SimProfile = 'default',
): void {
  if (html) {
    sendText(res, status, nginxPage(status), 'text/html');
    return;
  }
  if (profile === 'litellm' && !messages) {
    const upstream = { message: 'The server had an error while processing your request', type: 'server_error', code: null };
    sendJson(res, status, wrappedUpstreamError(status, LITELLM_KIND[status] ?? 'InternalServerError', upstream, undefined));
    return;
  }
  if (messages) {
    const type = status === 529 ? 'overloaded_error' : 'api_error';
    sendJson(res, status, anthropicError(type, status === 529 ? 'Overloaded' : 'upstream error'));
    return;
  }
  const msg =
    status === 504
      ? 'upstream request timed out'
      : status === 503
        ? 'upstream service unavailable'
        : status === 502
          ? 'bad response from upstream'
          : 'internal server error';
  sendJson(res, status, openaiError(msg, 'new_api_error', 'upstream_error'));
}
