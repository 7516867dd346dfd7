// One bounded request per probe, through the gateway's own route (gateway/exchange.ts): the same
// transport, the same connection check and the same decision of where the key goes as every other
// request to the gateway. Its transport is closed afterwards so the command exits at once. Network
// failures come back as values, never as thrown errors.
import { performance } from 'node:perf_hooks';
import {
  GatewayAbortedError,
  probeRoute,
  probeTransport,
  readText,
  redact,
  sendOnce,
  type Credential,
  type KeyRoute,
  type KeyUse,
} from '../../gateway';
import { PROBE_TIMEOUT_MS } from './check';

/** Response headers, lower-case names; a repeated header's values joined with ", ". */
export type ProbeHeaders = Record<string, string>;

export type ProbeResult =
  | { kind: 'answer'; status: number; text: string; headers: ProbeHeaders; ms: number; keySent: boolean }
  | { kind: 'network'; code: string; message: string; ms: number };

export type ProbeAnswer = Extract<ProbeResult, { kind: 'answer' }>;

/** One probe: where, how, and which header would carry the key (the route decides whether it goes). */
export interface ProbeRequest {
  url: string;
  method: 'GET' | 'POST';
  credential: Credential;
  headers: Record<string, string>;
  body?: string;
}

const MAX_BODY = 64 * 1024;

export class Prober {
  // One connection per probe: the probes of an address (a route each, then Messages) go at once, none waits behind another.
  private readonly transport = probeTransport(PROBE_TIMEOUT_MS, 8);
  private readonly route: KeyRoute;

  /** `use`: the key and the origins of `bases` it may go to (gateway/probe-transport.ts). */
  constructor(bases: readonly string[], use: KeyUse) {
    this.route = probeRoute(this.transport, bases, use);
  }

  async send(request: ProbeRequest): Promise<ProbeResult> {
    const started = performance.now();
    const elapsed = () => Math.max(1, Math.round(performance.now() - started));
    const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
    try {
      const { response, keySent } = await sendOnce(this.route, new URL(request.url), {
        operation: 'retrieve',
        method: request.method,
        credential: request.credential,
        headers: () => request.headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
        signal,
      });
      const text = await readText(response.body, MAX_BODY);
      return { kind: 'answer', status: response.status, text, headers: flatHeaders(response.headers), ms: elapsed(), keySent };
    } catch (error) {
      return { kind: 'network', ...networkCause(error, signal), ms: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.transport.destroy().catch(() => undefined);
  }
}

function flatHeaders(raw: Record<string, string | string[] | undefined>): ProbeHeaders {
  const out: ProbeHeaders = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function networkCause(error: unknown, signal: AbortSignal): { code: string; message: string } {
  const err = error as { code?: unknown; message?: unknown };
  const rawCode = typeof err.code === 'string' ? err.code : undefined;
  const timedOut = signal.aborted || error instanceof GatewayAbortedError || /TIMEOUT/.test(rawCode ?? '');
  const code = timedOut ? 'TIMEOUT' : (rawCode ?? 'ERROR');
  return { code, message: redact(typeof err.message === 'string' ? err.message : String(error)) };
}

/** Plain words for a network failure code, with what to check. */
export function explainNetwork(code: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused: nothing listens there; check that the gateway runs and the port is right';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return 'the host name does not resolve: check the spelling and your DNS';
    case 'TIMEOUT':
      return `no answer within ${PROBE_TIMEOUT_MS / 1000} s: a firewall, a proxy, or an overloaded gateway`;
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'the connection was reset: a proxy or firewall in between may be dropping it';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the network cannot reach that host';
    default:
      return /CERT|TLS|SSL|EPROTO/i.test(code)
        ? 'the TLS handshake failed: check the certificate and that the address uses the right scheme (http or https)'
        : `the request failed (${code})`;
  }
}
