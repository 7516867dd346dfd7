// A broken or hostile gateway (docs/security.md, "In detail": a gateway): what it can send back must
// neither hold a call for ever, nor get the key where the protocol does not send it, nor be stored
// as a video.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, describe, it } from 'node:test';
import { AuthError, DownloadError, GatewayAbortedError, GatewayUnavailableError, createGatewayClient } from '../../../gateway/index';
import type { GatewayClientOptions } from '../../../gateway/contract';
import { json, scripted, type Scripted } from '../../support/scripted-gateway';
import { KEY, digest } from './helpers';

const MP4_HEAD = Buffer.from('000000146674797069736f6d00000200', 'hex');
const general = { taskId: 't1', protocol: 'general' as const };
const openai = { taskId: 'video_1', protocol: 'openai' as const };

function client(bases: Scripted[], over: Partial<GatewayClientOptions> = {}) {
  const c = createGatewayClient({ baseUrls: bases.map((b) => b.url), apiKey: KEY, cooldownMs: 20, maxRetryAfterMs: 200, ...over });
  after(() => c.close());
  return c;
}

/** Sends the headers at once, then one byte of a JSON body every `everyMs`, never finishing. */
function trickle(res: ServerResponse, everyMs: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const timer = setInterval(() => res.write(' '), everyMs);
  res.on('close', () => clearInterval(timer));
}

describe('a gateway that trickles', () => {
  it('a status check has a deadline for the whole exchange, not per byte', async () => {
    const gw = await scripted((_q, res) => trickle(res, 100));
    const started = Date.now();
    await assert.rejects(
      client([gw], { requestTimeoutMs: 500, maxAttempts: 2, failoverDeadlineMs: 5_000 }).getTask(general),
      (e: unknown) => {
        assert.ok(e instanceof GatewayUnavailableError, String(e));
        assert.match(e.message, /no complete answer within 1 s/);
        return true;
      },
    );
    assert.ok(Date.now() - started < 6_000, `took ${Date.now() - started} ms`);
    assert.equal(gw.seen.length, 2);
  });

  it('cancelling a call closes its socket at once', async () => {
    let closedAt = 0;
    const gw = await scripted((_q, res) => {
      trickle(res, 100);
      res.on('close', () => {
        closedAt = Date.now();
      });
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    await assert.rejects(client([gw], { requestTimeoutMs: 60_000 }).getTask(general, { signal: controller.signal }), GatewayAbortedError);
    assert.ok(Date.now() - started < 2_000);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(closedAt > 0 && closedAt - started < 2_000, 'the server saw the connection close');
  });
});

describe("the key goes only to the protocol's own endpoints", () => {
  it("a redirect back to the gateway's own origin does not carry the key, and its JSON is not a video", async () => {
    const gw = await scripted((req, res) => {
      if (req.url === '/v1/videos/video_1/content') {
        res.writeHead(302, { location: '/api/user/self' });
        res.end();
      } else json(res, 200, { success: true, data: { quota: 1 } });
    });
    await assert.rejects(client([gw]).openVideo(openai), (e: unknown) => {
      assert.ok(e instanceof DownloadError, String(e));
      assert.match(e.message, /sent application\/json instead of a video: \{"success":true/);
      return true;
    });
    assert.equal(gw.seen[0]?.headers.authorization, `Bearer ${KEY}`);
    assert.equal(gw.seen[1]?.path, '/api/user/self');
    assert.equal(gw.seen[1]?.headers.authorization, undefined, 'no key on a followed redirect');
  });

  it("a result_url elsewhere on the gateway's host is fetched without the key", async () => {
    const gw = await scripted((_q, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.end(MP4_HEAD);
    });
    const video = await client([gw]).openVideo({ ...general, resultUrl: `${gw.url}/api/files/t1.mp4` });
    assert.equal((await digest(video.body)).bytes, MP4_HEAD.length);
    assert.equal(gw.seen[0]?.headers.authorization, undefined);
  });

  it("a result_url that is this task's content endpoint on another host name goes through the base addresses, with the key", async () => {
    const gw = await scripted((req, res) => {
      if (req.url === '/v1/videos/t1/content' && req.headers.authorization === `Bearer ${KEY}`) {
        res.writeHead(200, { 'content-type': 'video/mp4' });
        res.end(MP4_HEAD);
      } else json(res, 401, { error: { message: 'no key' } });
    });
    // new-api's ServerAddress default: an address the client cannot use.
    const video = await client([gw]).openVideo({ ...general, resultUrl: 'http://localhost:3000/v1/videos/t1/content' });
    assert.equal((await digest(video.body)).bytes, MP4_HEAD.length);
    assert.equal(video.baseUrl, gw.url);
  });

  it("a 401 from a host that never received the key is a download failure in that host's words, not a key error", async () => {
    const cdn = await scripted((_q, res) => json(res, 401, { error: { message: 'signature required' } }));
    const gw = await scripted((_q, res) => json(res, 200, {}));
    await assert.rejects(client([gw]).openVideo({ ...general, resultUrl: `${cdn.url}/v.mp4` }), (e: unknown) => {
      assert.ok(e instanceof DownloadError && !(e instanceof AuthError), String(e));
      assert.match(e.message, /refused it \(HTTP 401: signature required\); it was not sent the gateway key/);
      return true;
    });
  });

  it("a 403 from the content endpoint is that video's refusal in the gateway's words, not quota", async () => {
    const gw = await scripted((_q, res) => json(res, 403, { error: { message: 'request blocked: port 19180 is not allowed' } }));
    await assert.rejects(client([gw]).openVideo(openai), (e: unknown) => {
      assert.ok(e instanceof DownloadError, String(e));
      assert.match(e.message, /HTTP 403: request blocked: port 19180 is not allowed/);
      return true;
    });
  });
});

describe('only a video is a video', () => {
  for (const [what, type, body] of [
    ['an HTML page', 'text/html', '<html><body>Login</body></html>'],
    ['bytes of no video container', 'video/mp4', 'GIF89a not a video at all'],
    ['an empty body', 'video/mp4', ''],
  ] as const) {
    it(`${what} is refused before anything is stored`, async () => {
      const gw = await scripted((_q, res) => {
        res.writeHead(200, { 'content-type': type });
        res.end(body);
      });
      await assert.rejects(client([gw]).openVideo(openai), (e: unknown) => {
        assert.ok(e instanceof DownloadError, String(e));
        assert.match(
          e.message,
          type === 'text/html'
            ? /sent text\/html instead of a video: <html><body>Login/
            : body === ''
              ? /sent 0 bytes, too few to be a video/
              : /not a video/,
        );
        assert.equal(e.retryable, false);
        return true;
      });
    });
  }

  it('MP4, MOV and WebM starts pass', async () => {
    for (const head of [
      MP4_HEAD,
      Buffer.from('00000008776964650000000c6d64617400000000', 'hex'),
      Buffer.from('1a45dfa3a34286810001000042f7', 'hex'),
    ]) {
      const gw = await scripted((_q, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(head);
      });
      const video = await client([gw]).openVideo(openai);
      assert.equal((await digest(video.body)).bytes, head.length);
    }
  });
});

describe('outbound addresses', () => {
  it('a result_url, a redirect or a reference to a private address is refused, naming it, unless allowed', async () => {
    const cdn = await scripted((_q, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.end(MP4_HEAD);
    });
    // Another origin on loopback: as internal as it gets, and it answers.
    const internal = cdn.url;
    const gw = await scripted((req, res) => {
      if (req.url === '/v1/videos/video_1/content') {
        res.writeHead(302, { location: `${internal}/secret` });
        res.end();
      } else json(res, 404, {});
    });
    // The gateway here is on loopback, which allows private targets by default: refuse them explicitly.
    const strict = client([gw], { allowPrivateTargets: false });
    await assert.rejects(strict.openVideo({ ...general, resultUrl: 'http://169.254.169.254/latest/meta-data/iam' }), (e: unknown) => {
      assert.ok(e instanceof DownloadError, String(e));
      assert.match(
        e.message,
        /http:\/\/169\.254\.169\.254 is a private, loopback or link-local address; .*gateway\.allow_private_targets: true/,
      );
      return true;
    });
    await assert.rejects(strict.openVideo(openai), /127\.0\.0\.1:\d+ is a private, loopback or link-local address/);
    assert.equal(cdn.seen.length, 0, 'nothing was sent to the private address');
    await assert.rejects(
      strict.createTask({
        model: 'veo-3.1-fast-generate-001',
        protocol: 'openai',
        prompt: 'p',
        references: [{ kind: 'image', role: 'input_reference', source: `${internal}/a.png`, local: false }],
      }),
      /private, loopback or link-local address/,
    );
    // Allowed (the default for a gateway on a private network): fetched.
    const video = await client([gw]).openVideo(openai);
    assert.equal((await digest(video.body)).bytes, MP4_HEAD.length);
  });
});
