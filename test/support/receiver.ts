// A user's HTTP endpoints for job events (docs/notifications.md), on loopback: every request is
// recorded; /flaky/<job> answers 500 to the first two requests of each webhook-id, /down/<job>
// answers 503 always, /late/<job> answers 503 until the test opens it; everything else 200.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** The status the receiver answered. */
  status: number;
}

export interface Receiver {
  server: Server;
  url: string;
  seen: Received[];
  /** /late/<job> answers 200 from now on. */
  openLate(job: string): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const seen: Received[] = [];
  const failures = new Map<string, number>();
  const opened = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const id = String(req.headers['webhook-id']);
      const answer = (status: number, text: string) => {
        seen.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(), status });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
      };
      if (path.startsWith('/down')) return answer(503, 'down for maintenance');
      if (path.startsWith('/late/') && !opened.has(path.slice('/late/'.length))) return answer(503, 'not up yet');
      if (path.startsWith('/flaky') && (failures.get(id) ?? 0) < 2) {
        failures.set(id, (failures.get(id) ?? 0) + 1);
        return answer(500, 'busy, try later');
      }
      return answer(200, path.startsWith('/slack') ? 'ok' : 'thanks');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    openLate: (job) => opened.add(job),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
