// A gateway scripted request by request, on loopback: tests decide what each answer is (broken,
// hostile, slow) and assert on what reached it. Servers close when the test file ends.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after } from 'node:test';

export interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

export interface Scripted {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

/** `answer` gets each request (its body already read) and its index on this server. */
export type Answer = (req: IncomingMessage, res: ServerResponse, n: number) => void;

const servers: Scripted[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

export async function scripted(answer: Answer): Promise<Scripted> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const n = seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers }) - 1;
    req.resume();
    req.on('end', () => answer(req, res, n));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const handle: Scripted = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(handle);
  return handle;
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
