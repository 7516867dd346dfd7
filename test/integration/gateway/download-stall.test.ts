// A download body that trickles: undici ends a body only after a silence of
// request_timeout, so one byte every 2 s kept a download open for ever. The stall rule
// (docs/limits-downloads.md) ends it, and the download resumes with Range; a slow but steady body,
// or one the consumer holds back, is not cut.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { DownloadError, createGatewayClient } from '../../../gateway/index';
import type { GatewayClientOptions } from '../../../gateway/contract';
import { scripted, type Scripted } from '../../support/scripted-gateway';
import { KEY, digest } from './helpers';

const openai = { taskId: 'video_1', protocol: 'openai' as const };
/** The start of an MP4 (ftyp box), so the body passes the video check. */
const MP4_HEAD = Buffer.from('000000146674797069736f6d00000200', 'hex');

function client(bases: Scripted[], over: Partial<GatewayClientOptions> = {}) {
  const c = createGatewayClient({ baseUrls: bases.map((b) => b.url), apiKey: KEY, cooldownMs: 20, ...over });
  after(() => c.close());
  return c;
}

/** The video: an MP4 start, then `size` bytes in all. */
function video(size: number): Buffer {
  const bytes = Buffer.alloc(size, 0x61);
  MP4_HEAD.copy(bytes);
  return bytes;
}

/** The byte the request's Range starts at (0 without one). */
function rangeStart(req: IncomingMessage): number {
  const m = /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''));
  return m ? Number(m[1]) : 0;
}

/** Answers from `from` (206 with Content-Range when > 0), `first` bytes at once, then one byte every `everyMs`. */
function trickle(res: ServerResponse, body: Buffer, from: number, first: number, everyMs: number): void {
  res.writeHead(from > 0 ? 206 : 200, {
    'content-type': 'video/mp4',
    'content-length': String(body.length - from),
    ...(from > 0 ? { 'content-range': `bytes ${from}-${body.length - 1}/${body.length}` } : {}),
  });
  let at = from + first;
  res.write(body.subarray(from, at));
  const timer = setInterval(() => {
    if (at >= body.length) return;
    res.write(body.subarray(at, at + 1));
    at += 1;
  }, everyMs);
  res.on('close', () => clearInterval(timer));
}

/** Sends `body` from `from` in `chunk`-byte pieces every `everyMs`. */
function steady(res: ServerResponse, body: Buffer, chunk: number, everyMs: number): void {
  res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(body.length) });
  let at = 0;
  const timer = setInterval(() => {
    res.write(body.subarray(at, at + chunk));
    at += chunk;
    if (at >= body.length) {
      clearInterval(timer);
      res.end();
    }
  }, everyMs);
  res.on('close', () => clearInterval(timer));
}

/** The body's digest, or a rejection when it has not ended within `ms` (the old code never ends a trickle). */
async function within(ms: number, body: Readable): Promise<{ bytes: number; sha256: string }> {
  const promise = digest(body);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      body.destroy(); // so that the client can close
      reject(new Error(`still open after ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('a download that trickles', () => {
  it('is ended by the stall rule, resumed with Range, then a retryable download error', async () => {
    const body = video(1 << 20);
    // One byte every 200 ms: never a silence of request_timeout (1 s), so undici never ends it.
    const gw = await scripted((req, res) => trickle(res, body, rangeStart(req), 4096, 200));
    const started = Date.now();
    const download = await client([gw], { requestTimeoutMs: 1_000, downloadResumeAttempts: 1 }).openVideo(openai);
    await assert.rejects(within(15_000, download.body), (e: unknown) => {
      assert.ok(e instanceof DownloadError, String(e));
      assert.equal(e.retryable, true);
      assert.match(e.message, /stalled: \d+ bytes in the last 3 s, below the 6554 a download must keep/);
      return true;
    });
    // Two openings (the first and one resume), each ended within 4 x request_timeout.
    const took = Date.now() - started;
    assert.ok(took < 10_000, `took ${took} ms`);
    assert.equal(gw.seen.length, 2);
    const resumedFrom = rangeStart({ headers: gw.seen[1]?.headers ?? {} } as IncomingMessage);
    assert.ok(resumedFrom >= 4096, `resumed from byte ${resumedFrom}`);
  });

  it('resumes with Range where the stalled opening stopped: the same bytes, once', async () => {
    const body = video(256 * 1024);
    const gw = await scripted((req, res) => {
      const from = rangeStart(req);
      if (from === 0) trickle(res, body, 0, 4096, 200);
      else trickle(res, body, from, body.length - from, 1_000);
    });
    const download = await client([gw], { requestTimeoutMs: 1_000, downloadResumeAttempts: 2 }).openVideo(openai);
    const got = await within(15_000, download.body);
    assert.equal(got.bytes, body.length);
    assert.deepEqual(got, await digest(Readable.from([body])));
    assert.equal(gw.seen.length, 2);
    assert.match(String(gw.seen[1]?.headers.range), /^bytes=\d+-$/);
  });

  it('a slow but steady body is not cut: 8 KiB/s for 6 s with request_timeout 1 s', async () => {
    const body = video(48 * 1024);
    const gw = await scripted((_req, res) => steady(res, body, 4096, 500));
    const download = await client([gw], { requestTimeoutMs: 1_000, downloadResumeAttempts: 0 }).openVideo(openai);
    const got = await within(20_000, download.body);
    assert.equal(got.bytes, body.length);
    assert.equal(gw.seen.length, 1);
  });

  it('a consumer that holds the body back for longer than the window is not a stall', async () => {
    const body = video(16 << 20);
    const gw = await scripted((_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(body.length) });
      res.end(body);
    });
    const download = await client([gw], { requestTimeoutMs: 1_000, downloadResumeAttempts: 0 }).openVideo(openai);
    const first = await new Promise<Buffer>((resolve) => download.body.once('data', resolve));
    download.body.pause();
    await new Promise((r) => setTimeout(r, 5_000)); // more than the 3 s window
    const rest = await within(20_000, download.body);
    assert.equal(first.length + rest.bytes, body.length);
    assert.equal(gw.seen.length, 1);
  });
});
