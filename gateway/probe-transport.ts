// The route of a free, bounded read made before anything is paid for (the catalog, the published
// prices: docs/preflight.md, docs/costs.md; the doctor's probes): every phase of a request within
// `timeoutMs`, two connections, the key registered first so whatever a gateway echoes back passes
// through redact, its header decided by gateway/exchange.ts like every other request's, and the
// transport gone when the read ends.
import type { KeyRoute } from './exchange';
import { HttpTransport } from './http';
import { registerSecret } from './redact';

/** The key of a read, and where it may go. */
export interface KeyUse {
  /** Absent: every request goes without one. */
  key?: string;
  /**
   * The origins the key may be sent to (`grantedOrigins`); absent: every base address's origin,
   * the caller having applied the key rule to them (client/keys.ts, activities/context.ts).
   */
  keyOrigins?: ReadonlySet<string>;
}

/** The origins of `bases` the key rule did not refuse (gateway/key-route.ts `keyRouteRefusals`). */
export function grantedOrigins(bases: readonly string[], refusals: readonly { origin: string }[]): Set<string> {
  const refused = new Set(refusals.map((r) => r.origin));
  return new Set(bases.map((b) => new URL(b).origin).filter((origin) => !refused.has(origin)));
}

/** A route to `bases` for one read. The bases are the user's own addresses: private ones are allowed. */
export function probeRoute(transport: HttpTransport, bases: readonly string[], use: KeyUse): KeyRoute {
  registerSecret(use.key);
  return {
    transport,
    ...(use.key ? { apiKey: use.key } : {}),
    authOrigins: use.keyOrigins ?? grantedOrigins(bases, []),
    allowPrivateTargets: true,
  };
}

/** `connections` per origin: two for a read of one path per address; the doctor sends its probes of an address at once. */
export function probeTransport(timeoutMs: number, connections = 2): HttpTransport {
  return new HttpTransport({ connectTimeoutMs: timeoutMs, headersTimeoutMs: timeoutMs, bodyTimeoutMs: timeoutMs, connections });
}

export async function withProbeRoute<T>(
  timeoutMs: number,
  bases: readonly string[],
  use: KeyUse,
  read: (route: KeyRoute) => Promise<T>,
): Promise<T> {
  const transport = probeTransport(timeoutMs);
  try {
    return await read(probeRoute(transport, bases, use));
  } finally {
    await transport.destroy().catch(() => undefined);
  }
}
