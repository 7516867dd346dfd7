// The transport of a free, bounded read made before anything is paid for (the catalog, the published
// prices: docs/preflight.md, docs/costs.md): every phase of a request within `timeoutMs`, two
// connections, the key registered first so whatever a gateway echoes back passes through redact,
// and the transport gone when the read ends.
import { HttpTransport } from './http';
import { registerSecret } from './redact';

export async function withProbeTransport<T>(
  timeoutMs: number,
  key: string | undefined,
  read: (transport: HttpTransport) => Promise<T>,
): Promise<T> {
  registerSecret(key);
  const transport = new HttpTransport({
    connectTimeoutMs: timeoutMs,
    headersTimeoutMs: timeoutMs,
    bodyTimeoutMs: timeoutMs,
    connections: 2,
  });
  try {
    return await read(transport);
  } finally {
    await transport.destroy().catch(() => undefined);
  }
}
