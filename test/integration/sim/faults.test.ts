import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AUTH, JSON_AUTH, createGeneral, json, ok, raw, sleep, waitFinal, withSim } from './helpers';

const CREATE = JSON.stringify({ model: 'doubao-seedance-2-0-260128', prompt: 'faulty' });
const post = (base: string, body = CREATE): ReturnType<typeof raw> =>
  raw(`${base}/v1/video/generations`, { method: 'POST', headers: JSON_AUTH, body });

test('429 in every variant: Retry-After seconds, HTTP-date, none, empty body', async () => {
  await withSim({}, async (sim) => {
    const base = sim.urls[0] as string;
    sim.setFaults({ rateLimitRate: 1, rateLimitKind: 'retry-after-seconds' });
    const s = ok(await post(base));
    assert.equal(s.status, 429);
    assert.equal(s.headers['retry-after'], '1');
    assert.match((JSON.parse(s.body.toString()) as { error: { message: string } }).error.message, /Rate limit/);

    sim.setFaults({ rateLimitKind: 'retry-after-date' });
    const d = ok(await post(base));
    assert.equal(d.status, 429);
    const when = Date.parse(String(d.headers['retry-after']));
    assert.ok(Number.isFinite(when) && when > Date.now() && when < Date.now() + 3000, String(d.headers['retry-after']));

    sim.setFaults({ rateLimitKind: 'no-retry-after' });
    const n = ok(await post(base));
    assert.equal(n.status, 429);
    assert.equal(n.headers['retry-after'], undefined);
    assert.ok(n.body.length > 0);

    sim.setFaults({ rateLimitKind: 'empty' });
    const e = ok(await post(base));
    assert.equal(e.status, 429);
    assert.equal(e.body.length, 0);
    assert.equal(e.headers['retry-after'], undefined);

    // 'mixed' rotates through all four; Messages get the Anthropic shape.
    sim.setFaults({ rateLimitKind: 'mixed' });
    const kinds = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const r = ok(await post(base));
      kinds.add(
        r.body.length === 0
          ? 'empty'
          : r.headers['retry-after'] === undefined
            ? 'none'
            : /^\d+$/.test(String(r.headers['retry-after']))
              ? 'seconds'
              : 'date',
      );
    }
    assert.equal(kinds.size, 4);
    sim.setFaults({ rateLimitKind: 'no-retry-after' });
    const m = ok(
      await raw(`${base}/v1/messages`, { method: 'POST', headers: { ...JSON_AUTH, 'anthropic-version': '2023-06-01' }, body: '{}' }),
    );
    assert.equal(m.status, 429);
    assert.equal((JSON.parse(m.body.toString()) as { error: { type: string } }).error.type, 'rate_limit_error');
    assert.equal(sim.stats().tasksCreated, 0, 'a 429 processes nothing');
  });
});

test('5xx with JSON and with HTML bodies, for each status', async () => {
  await withSim({}, async (sim) => {
    const base = sim.urls[0] as string;
    for (const status of [500, 502, 503, 504]) {
      sim.setFaults({ errorRate: 1, errorStatuses: [status], errorBody: 'json' });
      const j = ok(await post(base));
      assert.equal(j.status, status);
      assert.equal((JSON.parse(j.body.toString()) as { error: { type: string } }).error.type, 'new_api_error');
      sim.setFaults({ errorBody: 'html' });
      const h = ok(await raw(`${base}/v1/video/generations/task_x`, { headers: AUTH }));
      assert.equal(h.status, status);
      assert.equal(h.headers['content-type'], 'text/html');
      assert.match(h.body.toString(), new RegExp(`<title>${status} `));
    }
    sim.setFaults({ errorStatuses: [529], errorBody: 'mixed' });
    const o = ok(
      await raw(`${base}/v1/messages`, { method: 'POST', headers: { ...JSON_AUTH, 'anthropic-version': '2023-06-01' }, body: '{}' }),
    );
    assert.equal(o.status, 529);
    assert.equal((JSON.parse(o.body.toString()) as { error: { type: string } }).error.type, 'overloaded_error');
    assert.equal(sim.stats().tasksCreated, 0);
  });
});

test('connection reset before and after the request is read; nothing is created', async () => {
  await withSim({}, async (sim) => {
    const base = sim.urls[0] as string;
    for (const when of ['before-read', 'after-read'] as const) {
      sim.setFaults({ resetRate: 1, resetWhen: when });
      const r = await post(base);
      assert.ok('error' in r, `expected a reset, got ${JSON.stringify(r)}`);
      assert.equal(r.error, 'ECONNRESET');
      assert.equal(sim.stats().faults[`reset-${when}`], 1);
    }
    assert.equal(sim.stats().tasksCreated, 0);
    assert.equal(sim.stats().requests['POST /v1/video/generations'], 2);
  });
});

test('lost create: the task is created and counted, but the client sees a reset', async () => {
  await withSim({ renderMs: 0, faults: { lostCreateRate: 1 } }, async (sim) => {
    const base = sim.urls[0] as string;
    const r = await post(base, JSON.stringify({ model: 'doubao-seedance-2-0-260128', prompt: 'paid twice?' }));
    assert.ok('error' in r);
    assert.equal(r.error, 'ECONNRESET');
    const s = sim.stats();
    assert.deepEqual(s.createsByPrompt, { 'paid twice?': 1 });
    assert.equal(s.tasksCreated, 1);
    assert.equal(s.faults['lost-create'], 1);
  });
});

test('slow responses add the configured latency', async () => {
  await withSim({ faults: { slowMs: 250 } }, async (sim) => {
    const t0 = Date.now();
    ok(await raw(`${sim.urls[0] as string}/v1/video/generations/task_x`, { headers: AUTH }));
    assert.ok(Date.now() - t0 >= 240, `took ${Date.now() - t0} ms`);
    const t1 = Date.now();
    ok(await raw(`${sim.urls[0] as string}/__sim/stats`, { headers: AUTH }));
    assert.ok(Date.now() - t1 < 200, '/__sim is never slowed');
  });
});

test('downloads cut mid-body: fewer bytes than Content-Length, then close', async () => {
  await withSim({ renderMs: 0, videoBytes: 4 * 1024 * 1024 }, async (sim) => {
    const base = sim.urls[0] as string;
    const id = await createGeneral(base, { model: 'doubao-seedance-2-0-260128', prompt: 'cut' });
    await waitFinal(base, id);
    sim.setFaults({ cutDownloadRate: 1 });
    const r = ok(await raw(`${base}/v1/videos/${id}/content`, { headers: AUTH }));
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-length'], String(4 * 1024 * 1024));
    assert.ok(r.aborted);
    assert.ok(r.body.length > 0 && r.body.length < 4 * 1024 * 1024, `got ${r.body.length}`);
    // Resuming with Range still works when the fault is off.
    sim.setFaults({ cutDownloadRate: 0 });
    const rest = ok(await raw(`${base}/v1/videos/${id}/content`, { headers: { ...AUTH, range: `bytes=${r.body.length}-` } }));
    assert.equal(rest.status, 206);
    assert.equal(r.body.length + rest.body.length, 4 * 1024 * 1024);
    assert.equal(sim.stats().faults['cut-download'], 1);
  });
});

test('task_not_exist for a window after creation, then visible', async () => {
  await withSim({ renderMs: 0, faults: { notExistWindowMs: 300 } }, async (sim) => {
    const base = sim.urls[0] as string;
    const id = await createGeneral(base, { model: 'doubao-seedance-2-0-260128', prompt: 'late' });
    const early = ok(await raw(`${base}/v1/video/generations/${id}`, { headers: AUTH }));
    assert.equal(early.status, 400);
    assert.deepEqual(JSON.parse(early.body.toString()), { code: 'task_not_exist', message: 'task_not_exist', data: null });
    assert.equal(ok(await raw(`${base}/v1/videos/${id}`, { headers: AUTH })).status, 400);
    await sleep(350);
    const later = json(await raw(`${base}/v1/video/generations/${id}`, { headers: AUTH })) as { data: { status: string } };
    assert.equal(later.data.status, 'SUCCESS');
  });
});

test('faults are deterministic for a seed and never touch /__sim', async () => {
  const run = async (seed: number): Promise<string[]> =>
    withSim({ seed, faults: { rateLimitRate: 0.3, errorRate: 0.3 } }, async (sim) => {
      const out: string[] = [];
      for (let i = 0; i < 30; i++) {
        const r = ok(await raw(`${sim.urls[0] as string}/v1/video/generations/task_x`, { headers: AUTH }));
        out.push(String(r.status));
        assert.equal(ok(await raw(`${sim.urls[0] as string}/__sim/stats`, { headers: AUTH })).status, 200);
      }
      return out;
    });
  const a = await run(7);
  assert.deepEqual(await run(7), a);
  assert.notDeepEqual(await run(8), a);
  assert.ok(a.includes('429') && a.includes('400'), a.join(','));
});

test('POST /__sim/faults merges faults at run time; scope limits them to endpoint kinds', async () => {
  await withSim({}, async (sim) => {
    const base = sim.urls[0] as string;
    const set = ok(
      await raw(`${base}/__sim/faults`, {
        method: 'POST',
        headers: JSON_AUTH,
        body: JSON.stringify({ errorRate: 1, errorStatuses: [503], errorBody: 'json', scope: ['create'] }),
      }),
    );
    assert.equal(set.status, 200);
    assert.equal(ok(await post(base)).status, 503);
    assert.equal(ok(await raw(`${base}/v1/video/generations/task_x`, { headers: AUTH })).status, 400);
    ok(await raw(`${base}/__sim/faults`, { method: 'POST', headers: AUTH, body: JSON.stringify({ errorRate: 0 }) }));
    assert.equal(ok(await post(base)).status, 200);
    assert.equal(sim.faults().errorStatuses?.[0], 503, 'merge keeps the other fields');
    const bad = ok(await raw(`${base}/__sim/faults`, { method: 'POST', headers: AUTH, body: 'nope' }));
    assert.equal(bad.status, 400);
  });
});
