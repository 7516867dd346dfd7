// Small response helpers and the error body shapes the real gateway uses (docs/protocol.md §6).
import type { IncomingMessage, ServerResponse } from 'node:http';

let requestCounter = 0;
/** new-api appends "(request id: …)" to its error messages; clients must cope with it. */
export function requestId(): string {
  requestCounter = (requestCounter + 1) % 1e9;
  return `2025${String(requestCounter).padStart(9, '0')}sim`;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  contentType: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** `{"error":{"message","type","code"}}`: auth, distributor, /v1/videos errors. */
export function openaiError(message: string, type = 'new_api_error', code: string | null = ''): unknown {
  return { error: { message: `${message} (request id: ${requestId()})`, type, code } };
}

/** `{"code","message","data":null}`: the general task protocol's errors. */
export function taskError(code: string, message: string): unknown {
  return { code, message, data: null };
}

/** `{"type":"error","error":{"type","message"}}`: /v1/messages errors. */
export function anthropicError(type: string, message: string): unknown {
  return { type: 'error', error: { type, message: `${message} (request id: ${requestId()})` } };
}

export function nginxPage(status: number): string {
  const reason: Record<number, string> = {
    500: 'Internal Server Error',
    502: 'Bad Gateway',
    503: 'Service Temporarily Unavailable',
    504: 'Gateway Time-out',
  };
  const title = `${status} ${reason[status] ?? 'Error'}`;
  return (
    `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n` +
    '<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n'
  );
}

export class BodyTooLarge extends Error {}

/** Reads a request body up to `limit` bytes; rejects with BodyTooLarge past it (checked before reading). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(new BodyTooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', (e) => {
      if (!failed) reject(e);
    });
  });
}

export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers['authorization'];
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(h.trim());
  return m ? m[1] : undefined;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
