// The simulator's gateway profiles over real HTTP, against what test/gateways/OBSERVED.md records
// each real gateway answering.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AUTH, JSON_AUTH, KEY, ok, raw, sleep, withSim } from './helpers';
import { geminiTaskOnGeneralRoute } from '../../support/new-api-answers';

type Json = Record<string, unknown>;
const FIXTURE = join(__dirname, 'fixtures', 'run-sim-cli.ts');

async function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const r = ok(
    await raw(url, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: init.headers ?? (init.body === undefined ? AUTH : JSON_AUTH),
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    }),
  );
  const text = r.body.toString('utf8');
  let body: unknown = text;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    // not JSON: kept as text
  }
  return { status: r.status, headers: r.headers, body: body as Json, length: r.body.length };
}

const message = (body: Json): string => String((body['error'] as Json | undefined)?.['message'] ?? '');

describe('profile litellm', () => {
  it('creates with a ~138-character base64 id that must be percent-encoded; its retrieve shows another id', async () => {
    // Long enough that the checks of a render not done yet come before it is done on a loaded machine
    // (200 ms once ended before its content was asked).
    await withSim({ profile: 'litellm', renderMs: 2000 }, async (sim) => {
      const base = sim.urls[0]!;
      const form = new FormData();
      for (const [k, v] of Object.entries({ model: 'veo-3.1-fast-generate-001', prompt: 'a', seconds: '4', size: '1280x720' }))
        form.append(k, v);
      const created = (await (await fetch(`${base}/v1/videos`, { method: 'POST', headers: AUTH, body: form })).json()) as Json;
      const id = String(created['id']);
      assert.match(id, /^video_[A-Za-z0-9+/]+=+$/);
      assert.ok(/[+/]/.test(id) && id.length > 130, id);
      assert.deepEqual(
        { ...created, id: 'x', created_at: 0 },
        {
          id: 'x',
          object: 'video',
          status: 'queued',
          created_at: 0,
          completed_at: null,
          expires_at: null,
          error: null,
          progress: 0,
          remixed_from_video_id: null,
          seconds: '4',
          size: '1280x720',
          model: 'veo-3.1-fast-generate-001',
          usage: { duration_seconds: 4 },
        },
      );
      const path = `${base}/v1/videos/${encodeURIComponent(id)}`;
      const notReady = await send(`${path}/content`);
      assert.equal(notReady.status, 400);
      assert.match(
        message(notReady.body),
        /^litellm\.BadRequestError: OpenAIException - .*Video is not ready.*LiteLLM: model group 'veo-3.1-fast-generate-001' failed/s,
      );
      const retrieved = await send(path);
      assert.equal(retrieved.status, 200);
      assert.notEqual(retrieved.body['id'], id, 'the retrieve answers another id');
      assert.equal(retrieved.body['usage'], null);
      const other = await send(`${base}/v1/videos/${encodeURIComponent(String(retrieved.body['id']))}`);
      assert.equal(other.status, 500, 'the retrieve id routes to api.openai.com');
      assert.match(message(other.body), /Cannot connect to host api\.openai\.com/);
      assert.equal((await send(`${base}/v1/videos/${id}`)).status, 404, 'an unencoded / is another path');
      assert.equal((await send(`${base}/v1/videos/task_doesnotexist`)).status, 500);
      await sleep(2100);
      const done = await send(path.replace('/v1/', '/'));
      assert.equal(done.body['status'], 'completed');
      const whole = await send(`${path}/content`, { headers: { ...AUTH, range: 'bytes=100-' } });
      assert.equal(whole.status, 200, 'Range is ignored');
      assert.equal(whole.headers['content-range'], undefined);
      assert.equal(whole.headers['accept-ranges'], undefined);
      assert.equal(whole.length, Number(whole.headers['content-length']));
    });
  });

  it('serves no general protocol, answers its own error shapes, lists its models', async () => {
    await withSim({ profile: 'litellm' }, async (sim) => {
      const base = sim.urls[0]!;
      for (const [method, path] of [
        ['POST', '/v1/video/generations'],
        ['GET', '/v1/video/generations/task_x'],
        ['GET', '/v1/v1/videos/x'],
      ] as const) {
        const r = await send(`${base}${path}`, { method, body: method === 'POST' ? {} : undefined });
        assert.deepEqual([r.status, r.body], [404, { detail: 'Not Found' }], path);
      }
      const unknown = await send(`${base}/v1/videos`, { body: { model: 'nope', prompt: 'x' } });
      assert.equal(unknown.status, 400);
      assert.equal(
        message(unknown.body),
        '/videos: Invalid model name passed in model=nope. Call `/v1/models` to view available models for your key.',
      );
      const upstream = await send(`${base}/v1/videos`, { body: { model: 'upstream-unknown', prompt: 'x' } });
      assert.equal(upstream.status, 404);
      assert.equal((upstream.body['error'] as Json)['code'], '404');
      assert.match(
        message(upstream.body),
        /^litellm\.NotFoundError: OpenAIException - \{"error":\{"message":"The model 'upstream-unknown' does not exist"/,
      );
      const wrong = await send(`${base}/v1/videos`, {
        headers: { authorization: 'Bearer sk-wrong-key-0000', 'content-type': 'application/json' },
        body: {},
      });
      assert.deepEqual(
        [wrong.status, (wrong.body['error'] as Json)['type'], message(wrong.body)],
        [400, 'no_db_connection', 'No connected db.'],
      );
      for (const headers of [{}, { authorization: KEY }] as Record<string, string>[]) {
        const none = await send(`${base}/v1/videos/x`, { headers });
        assert.deepEqual([none.status, none.body], [500, 'Internal Server Error']);
        assert.match(String(none.headers['content-type']), /^text\/plain/);
      }
      const models = await send(`${base}/v1/models`, { headers: { 'x-api-key': KEY } });
      assert.equal(models.status, 200);
      assert.deepEqual(
        (models.body['data'] as Json[]).map((m) => [m['id'], m['mode']]),
        [
          ['veo-3.1-fast-generate-001', 'video_generation'],
          ['veo-3.1-generate-001', 'video_generation'],
          ['upstream-unknown', 'video_generation'],
          ['claude-sonnet-4-6', 'chat'],
          ['claude-haiku-4-5', 'chat'],
        ],
      );
      const msg = await send(`${base}/v1/messages`, {
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: { model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(msg.status, 200, 'no anthropic-version needed');
      const badMsg = await send(`${base}/v1/messages`, {
        body: { model: 'claude-nope', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(badMsg.status, 400);
      assert.match(message(badMsg.body), /^anthropic_messages: Invalid model name passed in model=claude-nope/);
      sim.setFaults({ errorRate: 1, errorBody: 'json', errorStatuses: [500], scope: ['create'] });
      const failed = await send(`${base}/v1/videos`, { body: { model: 'veo-3.1-fast-generate-001', prompt: 'x' } });
      assert.equal(failed.status, 500);
      assert.match(
        message(failed.body),
        /^litellm\.InternalServerError: InternalServerError: OpenAIException - \{"error":\{"message":"The server had an error/,
      );
    });
  });

  it('with a database, a wrong key is a 401 naming only its last four characters', async () => {
    await withSim({ profile: 'litellm', litellmDatabase: true }, async (sim) => {
      const wrongKey = 'sk-wrong-key-abcdefgh1234';
      const r = await send(`${sim.urls[0]!}/v1/videos/x`, { headers: { authorization: `Bearer ${wrongKey}` } });
      assert.equal(r.status, 401);
      assert.equal((r.body['error'] as Json)['type'], 'token_not_found_in_db');
      assert.match(message(r.body), /Received API Key = sk-\.\.\.1234, Key Hash/);
      assert.ok(!message(r.body).includes(wrongKey));
    });
  });
});

describe('profile new-api', () => {
  it('repeats the last refresh round, puts a Veo result_url on ServerAddress, ignores Range, and reads Seedance tasks only on the general route', async () => {
    await withSim(
      { profile: 'new-api', renderMs: 900, refreshMs: 400, serverAddress: 'http://new-api.test:3000', cdn: false },
      async (sim) => {
        const base = sim.urls[0]!;
        const veo = await send(`${base}/v1/video/generations`, {
          body: { model: 'veo-3.1-fast-generate-001', prompt: 's', seconds: '4' },
        });
        assert.equal(veo.body['object'], 'video', 'a Veo model answers a video object on the general route');
        const id = String(veo.body['id']);
        const seedance = await send(`${base}/v1/video/generations`, { body: { model: 'seedance-1-0-pro-250528', prompt: 'd' } });
        const seedanceId = String(seedance.body['task_id']);
        const notImplemented = await send(`${base}/v1/videos/${seedanceId}`);
        assert.deepEqual(
          [notImplemented.status, notImplemented.body],
          [501, { code: 'not_implemented', message: 'not_implemented:54', data: null }],
        );
        const readings: string[] = [];
        let data: Json = {};
        for (let i = 0; i < 80 && data['status'] !== 'SUCCESS'; i++) {
          data = (await send(`${base}/v1/video/generations/${id}`)).body['data'] as Json;
          readings.push(`${String(data['status'])} ${String(data['progress'])}`);
          await sleep(40);
        }
        assert.equal(data['result_url'], `http://new-api.test:3000/v1/videos/${id}/content`);
        assert.equal(readings[0], 'NOT_START 0%');
        const distinct = readings.filter((r, i) => r !== readings[i - 1]);
        assert.ok(distinct.length <= 4 && readings.length >= 2 * distinct.length, `checks between rounds repeat: ${readings.join(', ')}`);
        const counts = sim.stats().checksByReading[id] ?? [];
        assert.equal(
          counts.reduce((a, b) => a + b, 0),
          readings.length,
        );
        const whole = await send(`${base}/v1/videos/${id}/content`, { headers: { ...AUTH, range: 'bytes=10-' } });
        assert.equal(whole.status, 200);
        assert.equal(whole.headers['cache-control'], 'public, max-age=86400');
        assert.equal(whole.length, Number(whole.headers['content-length']));
        sim.setFaults({ fetchGuardPort: 19180 });
        const guarded = await send(`${base}/v1/videos/${id}/content`);
        assert.deepEqual([guarded.status, guarded.body], [403, { error: { message: 'request blocked: port 19180 is not allowed' } }]);
        const noKey = await send(`${base}/v1/videos/${id}/content`, { headers: {} });
        assert.equal(noKey.status, 401);
        assert.match(message(noKey.body), /^未提供令牌 \(request id: /);
        const wrong = await send(`${base}/v1/video/generations/${id}`, { headers: { authorization: 'Bearer sk-nope' } });
        assert.match(message(wrong.body), /^无效的令牌 /);
        const model = await send(`${base}/v1/videos`, { body: { model: 'nope-model', prompt: 'x' } });
        assert.equal(model.status, 503);
        assert.match(message(model.body), /^分组 default 下模型 nope-model 无可用渠道（distributor） \(request id: /);
        const page = await send(`${base}/v2/videos`, { body: {} });
        assert.equal(page.status, 200);
        assert.match(String(page.headers['content-type']), /^text\/html/);
        assert.equal((await send(`${base}/v1/video/nothing`)).status, 404);
      },
    );
  });
});

describe('profile new-api-0.10', () => {
  it('a Veo model is a Gemini-channel task: its operation name as id, read on the general route in its own shape', async () => {
    await withSim({ profile: 'new-api-0.10', renderMs: 200, refreshMs: 100 }, async (sim) => {
      const base = sim.urls[0]!;
      const created = await send(`${base}/v1/videos`, { body: { model: 'veo-3.1-fast-generate-001', prompt: 'v', seconds: '4' } });
      const id = String(created.body['id']);
      // The create answers new-api's own video object (relay/channel/task/gemini DoResponse), status empty.
      const at = created.body['created_at'];
      assert.deepEqual(created.body, {
        id,
        task_id: id,
        object: 'video',
        model: 'veo-3.1-fast-generate-001',
        status: '',
        progress: 0,
        created_at: at,
      });
      // relay/channel/task/gemini: the id is the Veo operation's name, base64url without padding.
      assert.match(Buffer.from(id, 'base64url').toString('utf8'), /^models\/veo-3\.1-fast-generate-001\/operations\/[0-9a-f]{12}$/);
      const running = (await send(`${base}/v1/video/generations/${id}`)).body;
      assert.equal((running['data'] as Json)['status'], 'processing', JSON.stringify(running));
      // ConvertToOpenAIVideo: read live, progress 50 until done, no seconds or size.
      const object = (await send(`${base}/v1/videos/${id}`)).body;
      assert.deepEqual(Object.keys(object), ['id', 'object', 'model', 'status', 'progress', 'created_at', 'completed_at']);
      assert.deepEqual([object['status'], object['progress']], ['in_progress', 50]);
      await sleep(450);
      // relay/relay_task.go reads a Gemini task live and answers this, not the task record.
      assert.deepEqual(
        (await send(`${base}/v1/video/generations/${id}`)).body,
        geminiTaskOnGeneralRoute(id, `http://localhost:3000/v1/videos/${id}/content`),
      );
      const done = (await send(`${base}/v1/videos/${id}`)).body;
      assert.deepEqual([done['status'], done['progress']], ['completed', 100]);
    });
  });

  it('answers task_id only, the address in fail_reason, and a failed Seedance reason in data.data.error', async () => {
    await withSim({ profile: 'new-api-0.10', renderMs: 200, refreshMs: 100, cdn: true }, async (sim) => {
      const base = sim.urls[0]!;
      const created = await send(`${base}/v1/video/generations`, { body: { model: 'seedance-1-0-pro-250528', prompt: 'ok' } });
      assert.deepEqual(Object.keys(created.body), ['task_id']);
      assert.match(String(created.body['task_id']), /^cgt-\d{13}-[0-9a-f]{6}$/);
      const viaVideos = await fetch(`${base}/v1/videos`, {
        method: 'POST',
        headers: AUTH,
        body: (() => {
          const f = new FormData();
          f.append('model', 'seedance-1-0-pro-250528');
          f.append('prompt', 'form');
          return f;
        })(),
      });
      assert.deepEqual(Object.keys((await viaVideos.json()) as Json), ['task_id']);
      await sleep(450);
      const done = (await send(`${base}/v1/video/generations/${String(created.body['task_id'])}`)).body['data'] as Json;
      assert.equal(done['status'], 'SUCCESS');
      assert.ok(!('result_url' in done));
      assert.match(String(done['fail_reason']), /^http:\/\/127\.0\.0\.1:\d+\/videos\/cgt-/);
      assert.equal(((done['data'] as Json)['content'] as Json)['video_url'], done['fail_reason']);
      assert.equal((await send(String(done['fail_reason']), { headers: {} })).status, 200, 'the upstream file needs no key');
      const seconds = await send(`${base}/v1/video/generations`, { body: { model: 'seedance-1-0-pro-250528', prompt: 'n', seconds: 5 } });
      assert.equal(seconds.body['message'], 'json: cannot unmarshal number into Go struct field .Alias.seconds of type string');
    });
    await withSim({ profile: 'new-api-0.10', renderMs: 100, refreshMs: 100, faults: { failRate: 1 } }, async (sim) => {
      const base = sim.urls[0]!;
      const id = String(
        (await send(`${base}/v1/video/generations`, { body: { model: 'seedance-1-0-pro-250528', prompt: 'no' } })).body['task_id'],
      );
      await sleep(350);
      const failed = (await send(`${base}/v1/video/generations/${id}`)).body['data'] as Json;
      assert.deepEqual([failed['status'], failed['fail_reason']], ['FAILURE', 'task failed']);
      const error = (failed['data'] as Json)['error'] as Json;
      assert.ok(
        typeof error['code'] === 'string' && typeof error['message'] === 'string' && String(error['message']).length > 10,
        JSON.stringify(error),
      );
    });
  });
});

describe('reelflow sim --profile', () => {
  it('starts the profile with its settings and says which gateway it imitates', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        FIXTURE,
        'sim',
        '--port',
        '0',
        '--key',
        KEY,
        '--profile',
        'new-api',
        '--server-address',
        'http://new-api.test:3000',
        '--refresh',
        '100ms',
        '--fetch-guard-port',
        '19180',
        '--render-time',
        '0s',
        '--no-cdn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], cwd: join(__dirname, '../../..') },
    );
    let out = '';
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('Ctrl-C')) resolve();
      });
      child.on('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    try {
      await ready;
      assert.match(out, /sim: imitating new-api/);
      const base = /sim: listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
      const id = String((await send(`${base}/v1/videos`, { body: { model: 'veo-3.1-fast-generate-001', prompt: 'cli' } })).body['id']);
      await sleep(250);
      const data = (await send(`${base}/v1/video/generations/${id}`)).body['data'] as Json;
      assert.equal(data['result_url'], `http://new-api.test:3000/v1/videos/${id}/content`);
      assert.equal((await send(`${base}/v1/videos/${id}/content`)).status, 403);
    } finally {
      child.kill('SIGTERM');
    }
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on('exit', resolve)));
  });

  it('refuses an unknown profile as a usage error', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, 'sim', '--profile', 'kong'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: join(__dirname, '../../..'),
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    assert.notEqual(code, 0);
    assert.match(err, /--profile.*litellm, new-api, new-api-0\.10/s);
  });
});
