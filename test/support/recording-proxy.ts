// A pass-through HTTP proxy in front of a real server (the simulator) that shows the test every
// request with its whole body before forwarding it: what reached the gateway, seen from outside. A
// test may answer some requests itself (`answer`): a hostile gateway that is the simulator for every
// other call.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordingProxy {
  url: string;
  close(): Promise<void>;
}

/** Answers the request instead of the server behind the proxy when it returns true. */
export type ProxyAnswer = (req: IncomingMessage, res: ServerResponse, body: Buffer) => boolean;

export interface ProxyOptions {
  /** Headers added to the answer of a request (a hostile gateway's, e.g. a billed figure it makes up). */
  answerHeaders?: (req: IncomingMessage) => Record<string, string>;
  answer?: ProxyAnswer;
}

export async function recordingProxy(
  target: string,
  seen: (req: IncomingMessage, body: Buffer) => void,
  options: ProxyOptions = {},
): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen(req, body);
      if (options.answer?.(req, res, body)) return;
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer: IncomingMessage) => {
          res.writeHead(answer.statusCode ?? 502, { ...answer.headers, ...options.answerHeaders?.(req) });
          answer.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
