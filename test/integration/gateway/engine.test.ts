// The retry engine (gateway/retry.ts) against scripted HTTP servers on loopback: each test decides
// request by request what the "gateway" answers, and asserts on what reached it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  AmbiguousCreateError,
  GatewayUnavailableError,
  InvalidRequestError,
  RateLimitedError,
  createGatewayClient,
} from '../../../gateway/index';
import type { GatewayClientOptions } from '../../../gateway/contract';
import { json, scripted, type Scripted } from '../../support/scripted-gateway';
import { KEY, digest, render } from './helpers';

const RUNNING = { task_id: 't1', status: 'IN_PROGRESS', progress: '50%' };
const CREATED = { task_id: 't1' };
const ref = { taskId: 't1', protocol: 'general' as const };

function client(bases: Scripted[], over: Partial<GatewayClientOptions> = {}) {
  const c = createGatewayClient({ baseUrls: bases.map((b) => b.url), apiKey: KEY, cooldownMs: 20, maxRetryAfterMs: 1_000, ...over });
  after(() => c.close());
  return c;
}

describe('the retry engine: budget per call', () => {
  it('a status check that keeps failing makes exactly maxAttempts requests, spread over the bases', async () => {
    const a = await scripted((_q, res) => json(res, 502, { error: { message: 'bad gateway' } }));
    const b = await scripted((_q, res) => json(res, 500, { error: { message: 'upstream' } }));
    await assert.rejects(client([a, b]).getTask(ref), GatewayUnavailableError);
    assert.equal(a.seen.length + b.seen.length, 6, 'max(6, 2 x 2 + 2) requests');
    assert.equal(a.seen.length, 3);
  });

  it('maxAttempts is the budget whatever the bases', async () => {
    const a = await scripted((_q, res) => json(res, 503, {}));
    await assert.rejects(client([a], { maxAttempts: 2 }).getTask(ref), GatewayUnavailableError);
    assert.equal(a.seen.length, 2);
  });

  it('no wait runs past the deadline: a Retry-After beyond it ends the call at once', async () => {
    const a = await scripted((_q, res) => json(res, 429, {}, { 'retry-after': '5' }));
    const t0 = Date.now();
    await assert.rejects(client([a], { failoverDeadlineMs: 1_000, maxRetryAfterMs: 10_000 }).getTask(ref), RateLimitedError);
    assert.equal(a.seen.length, 1);
    assert.ok(Date.now() - t0 < 900, 'did not sleep the 5 s');
  });
});

describe('the retry engine: 429', () => {
  it('waits and retries on the same base, which stays healthy', async () => {
    const a = await scripted((_q, res, n) => (n < 2 ? json(res, 429, {}, { 'retry-after': '0' }) : json(res, 200, RUNNING)));
    const b = await scripted((_q, res) => json(res, 200, RUNNING));
    const c = client([a, b]);
    const status = await c.getTask(ref);
    assert.equal(status.baseUrl, a.url);
    assert.equal(status.progress, 50);
    assert.equal(a.seen.length, 3);
    assert.equal(b.seen.length, 0, 'no failover because of 429');
    assert.equal(c.pool.snapshot()[0]?.consecutiveFailures, 0);
  });

  it('gives up after maxRateLimitRetries with RateLimitedError', async () => {
    const a = await scripted((_q, res) => json(res, 429, { error: { message: 'slow down' } }));
    await assert.rejects(client([a], { maxRateLimitRetries: 2 }).getTask(ref), RateLimitedError);
    assert.equal(a.seen.length, 3, 'the first try and two retries');
  });
});

describe('the retry engine: failover', () => {
  it('a 5xx base is put in cooldown; the call and the next ones go to the next base', async () => {
    const a = await scripted((_q, res) => json(res, 500, {}));
    const b = await scripted((_q, res) => json(res, 200, RUNNING));
    const c = client([a, b], { cooldownMs: 60_000 });
    assert.equal((await c.getTask(ref)).baseUrl, b.url);
    assert.equal((await c.getTask(ref)).baseUrl, b.url);
    assert.equal(a.seen.length, 1, 'the cooling primary costs nothing');
    assert.equal(c.pool.snapshot()[0]?.healthy, false);
  });
});

describe('the retry engine: creates (docs/protocol.md §6)', () => {
  it('a 502 after the create was read is ambiguous: one request in all, no failover', async () => {
    const a = await scripted((_q, res) => json(res, 502, {}));
    const b = await scripted((_q, res) => json(res, 200, CREATED));
    await assert.rejects(client([a, b]).createTask(render('once')), (e: unknown) => e instanceof AmbiguousCreateError && e.attempts === 1);
    assert.equal(a.seen.length, 1);
    assert.equal(b.seen.length, 0);
  });

  it('a reset after the create was read is ambiguous too', async () => {
    const a = await scripted((req) => req.socket.destroy());
    const b = await scripted((_q, res) => json(res, 200, CREATED));
    await assert.rejects(client([a, b]).createTask(render('reset')), AmbiguousCreateError);
    assert.equal(b.seen.length, 0);
  });

  it('a 503 with Retry-After was refused unprocessed: sent again, on the next base', async () => {
    const a = await scripted((_q, res) => json(res, 503, {}, { 'retry-after': '1' }));
    const b = await scripted((_q, res) => json(res, 200, CREATED));
    const created = await client([a, b]).createTask(render('refused'));
    assert.equal(created.baseUrl, b.url);
    assert.equal(created.attempts, 2);
  });

  it('retries: always, then 429s to the end: still ambiguous, since the first may have been processed', async () => {
    const a = await scripted((_q, res) => json(res, 502, {}));
    const b = await scripted((_q, res) => json(res, 429, {}, { 'retry-after': '0' }));
    await assert.rejects(
      client([a, b], { createRetries: 'always', maxRateLimitRetries: 1 }).createTask(render('always')),
      (e: unknown) => e instanceof AmbiguousCreateError && e.attempts === 3,
    );
    assert.equal(a.seen.length + b.seen.length, 3);
  });

  it('an unreachable remote reference fails the create before anything is sent', async () => {
    const a = await scripted((_q, res) => json(res, 200, CREATED));
    const images = await scripted((_q, res) => json(res, 404, {}));
    const request = render('ref', {
      protocol: 'openai',
      model: 'veo-3.1-fast-generate-001',
      references: [{ kind: 'image', role: 'reference_image', source: `${images.url}/gone.png`, local: false }],
    });
    await assert.rejects(
      client([a]).createTask(request),
      (e: unknown) => e instanceof InvalidRequestError && /gone\.png.*HTTP 404/.test(e.message),
    );
    assert.equal(a.seen.length, 0);
    assert.equal(images.seen[0]?.headers.authorization, undefined);
  });
});

/** The first bytes of an MP4 (an ftyp box): downloads check that a video starts like one. */
const MP4_HEAD = Buffer.from('000000146674797069736f6d00000200', 'hex');

describe('the retry engine: keys and redirects', () => {
  it('messages carry the key as x-api-key only; a redirect to another origin never carries it', async () => {
    const cdn = await scripted((_q, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(MP4_HEAD.length) });
      res.end(MP4_HEAD);
    });
    const a = await scripted((req, res) => {
      if (req.url === '/v1/messages') json(res, 200, { type: 'message', model: 'm', content: [{ type: 'text', text: 'ok' }] });
      else {
        res.writeHead(302, { location: `${cdn.url}/v.mp4?sig=1` });
        res.end();
      }
    });
    const c = client([a]);
    assert.equal((await c.createMessage({ model: 'm', maxTokens: 8, prompt: 'p' })).text, 'ok');
    assert.equal(a.seen[0]?.headers['x-api-key'], KEY);
    assert.equal(a.seen[0]?.headers.authorization, undefined);
    const video = await c.openVideo({ taskId: 'v1', protocol: 'openai' });
    assert.equal((await digest(video.body)).bytes, MP4_HEAD.length);
    assert.equal(video.source, `${cdn.url}/v.mp4`);
    assert.equal(a.seen[1]?.headers.authorization, `Bearer ${KEY}`);
    assert.equal(cdn.seen[0]?.headers.authorization, undefined);
  });
});

describe('the retry engine: downloads resume through it', () => {
  const video = Buffer.concat([MP4_HEAD, Buffer.alloc(256 * 1024 - MP4_HEAD.length, 7)]);
  const etag = '"v1"';
  const half = 100_000;

  it('a cut body reopens with Range + If-Range; a failing reopen fails over like any call', async () => {
    const a = await scripted((_q, res, n) => {
      if (n === 0) {
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(video.length), etag });
        res.write(video.subarray(0, half), () => res.destroy());
      } else {
        json(res, 503, {});
      }
    });
    const b = await scripted((req, res) => {
      const from = Number(/bytes=(\d+)-/.exec(req.headers.range ?? '')?.[1] ?? 0);
      res.writeHead(206, {
        'content-range': `bytes ${from}-${video.length - 1}/${video.length}`,
        'content-length': String(video.length - from),
        etag,
      });
      res.end(video.subarray(from));
    });
    const d = await client([a, b]).openVideo({ taskId: 'v2', protocol: 'openai' });
    assert.equal(d.baseUrl, a.url);
    assert.equal(d.totalBytes, video.length);
    const got = await digest(d.body);
    assert.equal(got.bytes, video.length);
    assert.deepEqual(
      a.seen.map((s) => s.headers.range),
      [undefined, `bytes=${half}-`],
    );
    assert.equal(b.seen.length, 1);
    assert.equal(b.seen[0]?.headers.range, `bytes=${half}-`);
    assert.equal(b.seen[0]?.headers['if-range'], etag);
    assert.equal(b.seen[0]?.path, '/v1/videos/v2/content');
  });
});
