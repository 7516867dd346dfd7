// One bounded HTTP request per probe, on a private undici Agent that is closed afterwards so the
// command exits at once. Network failures come back as values, never as thrown errors.
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { keyCheckedConnector, redact } from '../../gateway';
import { PROBE_TIMEOUT_MS } from './check';

/** Response headers, lower-case names; a repeated header's values joined with ", ". */
export type ProbeHeaders = Record<string, string>;

export type ProbeResult =
  | { kind: 'answer'; status: number; text: string; headers: ProbeHeaders; ms: number }
  | { kind: 'network'; code: string; message: string; ms: number };

export type ProbeAnswer = Extract<ProbeResult, { kind: 'answer' }>;

const MAX_BODY = 64 * 1024;

export class Prober {
  private readonly agent = new Agent({
    // The key rule's connection check (gateway/key-route.ts) holds for probes as for requests.
    connect: keyCheckedConnector(PROBE_TIMEOUT_MS),
    headersTimeout: PROBE_TIMEOUT_MS,
    bodyTimeout: PROBE_TIMEOUT_MS,
    keepAliveTimeout: 1_000,
  });

  async send(url: string, options: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }): Promise<ProbeResult> {
    const started = performance.now();
    const elapsed = () => Math.max(1, Math.round(performance.now() - started));
    try {
      const res = await request(url, {
        method: options.method,
        headers: options.headers,
        body: options.body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      let text = '';
      for await (const chunk of res.body) {
        if (text.length < MAX_BODY) text += (chunk as Buffer).toString('utf8');
      }
      return { kind: 'answer', status: res.statusCode, text, headers: flatHeaders(res.headers), ms: elapsed() };
    } catch (error) {
      return { kind: 'network', ...networkCause(error), ms: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}

function flatHeaders(raw: Record<string, string | string[] | undefined>): ProbeHeaders {
  const out: ProbeHeaders = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function networkCause(error: unknown): { code: string; message: string } {
  const err = error as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
  const cause = err.cause as { code?: unknown } | undefined;
  const rawCode = typeof err.code === 'string' ? err.code : typeof cause?.code === 'string' ? cause.code : undefined;
  const timedOut = err.name === 'TimeoutError' || err.name === 'AbortError' || /TIMEOUT/.test(rawCode ?? '');
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
