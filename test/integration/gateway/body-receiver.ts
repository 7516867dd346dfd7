// A gateway on loopback that checks create bodies as they arrive, holding none of them whole: the
// text around the one reference is kept, the reference's bytes are decoded (base64 of a general
// body) or taken raw (the file part of a multipart body) into a sha256. Each request is read to its
// end before it is answered, as a gateway does; `answer` decides the status of the n-th one.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  /** Bytes that arrived. */
  bytes: number;
  /** The body's text before the reference's bytes and after them (a general body: around the base64). */
  head: string;
  tail: string;
  /** The reference's decoded bytes: how many and their sha256. */
  reference: { bytes: number; sha256: string };
  /** Base64 characters that arrived (general bodies); anything but the base64 alphabet fails the request. */
  base64Chars: number;
  /** The body ended as its Content-Length said (no cut-off request). */
  complete: boolean;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Called on each request's first body bytes (tests change the file under it). */
  onFirstBytes?: () => void;
  close(): Promise<void>;
}

export type Answer = (res: ServerResponse, n: number, got: Received) => void;

const MARK = Buffer.from(';base64,');
const QUOTE = 0x22;

/** A general body: head up to `;base64,`, base64 until the closing quote, then the tail. */
class GeneralScanner {
  private state: 'head' | 'base64' | 'tail' = 'head';
  private headBytes = Buffer.alloc(0);
  private tailBytes = Buffer.alloc(0);
  private carry = '';
  private readonly hash = createHash('sha256');
  decoded = 0;
  chars = 0;
  bad = false;

  push(chunk: Buffer): void {
    if (this.state === 'head') {
      this.headBytes = Buffer.concat([this.headBytes, chunk]);
      const at = this.headBytes.indexOf(MARK);
      if (at < 0) return;
      const rest = this.headBytes.subarray(at + MARK.length);
      this.headBytes = this.headBytes.subarray(0, at + MARK.length);
      this.state = 'base64';
      chunk = rest;
    }
    if (this.state === 'base64') {
      const end = chunk.indexOf(QUOTE);
      this.decode(end < 0 ? chunk : chunk.subarray(0, end));
      if (end < 0) return;
      this.state = 'tail';
      chunk = chunk.subarray(end);
    }
    this.tailBytes = Buffer.concat([this.tailBytes, chunk]);
  }

  private decode(part: Buffer): void {
    const text = this.carry + part.toString('latin1');
    this.chars += part.length;
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) this.bad = true;
    const whole = text.length - (text.length % 4);
    this.carry = text.slice(whole);
    const bytes = Buffer.from(text.slice(0, whole), 'base64');
    this.decoded += bytes.length;
    this.hash.update(bytes);
  }

  finish(): Pick<Received, 'head' | 'tail' | 'reference' | 'base64Chars'> {
    if (this.carry) this.bad = true;
    return {
      head: this.headBytes.toString('utf8'),
      tail: this.tailBytes.toString('utf8'),
      reference: { bytes: this.decoded, sha256: this.hash.digest('hex') },
      base64Chars: this.bad ? -1 : this.chars,
    };
  }
}

/** A multipart body: head through the file part's blank line, the file's bytes, then the closing boundary. */
class MultipartScanner {
  private headBytes = Buffer.alloc(0);
  private inFile = false;
  private pending = Buffer.alloc(0);
  private readonly hash = createHash('sha256');
  private fileBytes = 0;

  constructor(private readonly closing: Buffer) {}

  push(chunk: Buffer): void {
    if (!this.inFile) {
      this.headBytes = Buffer.concat([this.headBytes, chunk]);
      const part = this.headBytes.indexOf('name="input_reference"');
      const blank = part < 0 ? -1 : this.headBytes.indexOf('\r\n\r\n', part);
      if (blank < 0) return;
      chunk = this.headBytes.subarray(blank + 4);
      this.headBytes = this.headBytes.subarray(0, blank + 4);
      this.inFile = true;
    }
    // The last bytes may be the closing boundary: hash all but them.
    this.pending = Buffer.concat([this.pending, chunk]);
    const keep = this.closing.length;
    if (this.pending.length > keep) {
      const done = this.pending.subarray(0, this.pending.length - keep);
      this.hash.update(done);
      this.fileBytes += done.length;
      this.pending = Buffer.from(this.pending.subarray(this.pending.length - keep));
    }
  }

  finish(): Pick<Received, 'head' | 'tail' | 'reference' | 'base64Chars'> {
    return {
      head: this.headBytes.toString('utf8'),
      tail: this.pending.toString('utf8'),
      reference: { bytes: this.fileBytes, sha256: this.hash.digest('hex') },
      base64Chars: 0,
    };
  }
}

function scannerFor(headers: IncomingHttpHeaders): GeneralScanner | MultipartScanner {
  const boundary = /boundary=([^;]+)/.exec(headers['content-type'] ?? '')?.[1];
  return boundary ? new MultipartScanner(Buffer.from(`\r\n--${boundary}--\r\n`)) : new GeneralScanner();
}

export async function startReceiver(answer: Answer): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: [], close: () => Promise.resolve() };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const scanner = scannerFor(req.headers);
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      if (bytes === 0) receiver.onFirstBytes?.();
      bytes += chunk.length;
      scanner.push(chunk);
    });
    const done = (complete: boolean) => {
      const got: Received = { path: req.url ?? '', headers: req.headers, bytes, complete, ...scanner.finish() };
      const n = receiver.received.push(got) - 1;
      if (complete) answer(res, n, got);
    };
    req.on('end', () => done(Number(req.headers['content-length'] ?? bytes) === bytes));
    req.on('close', () => {
      if (!req.complete) done(false);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

export function created(res: ServerResponse, id: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id, task_id: id, object: 'video', status: 'queued', progress: 0 }));
}

export function failed(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/html', ...headers });
  res.end(`<html><body>${status}</body></html>`);
}

export interface ChildReceiver {
  url: string;
  received: Received[];
  /** Resolves once `count` requests have been received (IPC and HTTP answers may arrive in either order). */
  receivedCount(count: number): Promise<void>;
  close(): Promise<void>;
}

/** A receiver answering every create 200 as `<prefix>-<n>`, in a child process (see body-receiver-child.ts). */
export async function startReceiverInChild(prefix: string): Promise<ChildReceiver> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'body-receiver-child.ts'), prefix], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the receiver process ended (${code}) before it listened`)));
    child.on('message', (message: { url?: string; received?: Received }) => {
      if (message.url) resolve(message.url);
      if (message.received) {
        received.push(message.received);
        for (const wake of waiters) wake();
      }
    });
  });
  return {
    url,
    received,
    receivedCount: (count) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (received.length < count) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.disconnect();
      }),
  };
}
