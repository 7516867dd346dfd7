import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AUTH, createGeneral, json, ok, raw, waitFinal, withSim } from './helpers';

test('several base addresses onto one task store: create on one, poll and download on another', async () => {
  await withSim({ ports: [0, 0, 0], renderMs: 0 }, async (sim) => {
    const [a, b, c] = sim.urls as [string, string, string];
    assert.equal(new Set(sim.urls).size, 3);
    const id = await createGeneral(a, { model: 'veo-3.1-fast-generate-preview', prompt: 'shared' });
    const data = await waitFinal(b, id);
    assert.equal(data['status'], 'SUCCESS');
    assert.equal(data['result_url'], `${b}/v1/videos/${id}/content`, 'result_url is on the base that answered');
    assert.equal(ok(await raw(`${c}/v1/videos/${id}/content`, { headers: AUTH })).status, 200);
    const s = sim.stats();
    const port = (u: string): string => new URL(u).port;
    assert.equal(s.requestsByPort[port(a)], 1);
    assert.ok((s.requestsByPort[port(b)] ?? 0) >= 1);
    assert.equal(s.requestsByPort[port(c)], 1);
  });
});

test('refuse closes the listener (ECONNREFUSED) and up reopens the same port', async () => {
  await withSim({ ports: [0, 0], renderMs: 0 }, async (sim) => {
    const [a, b] = sim.urls as [string, string];
    const id = await createGeneral(a, { model: 'doubao-seedance-2-0-260128', prompt: 'failover' });
    await sim.setPortMode(0, 'refuse');
    const r = await raw(`${a}/v1/video/generations/${id}`, { headers: AUTH });
    assert.ok('error' in r);
    assert.equal(r.error, 'ECONNREFUSED');
    assert.equal((await waitFinal(b, id))['status'], 'SUCCESS');
    await sim.setPortMode(0, 'up');
    assert.equal(sim.urls[0], a);
    assert.equal(ok(await raw(`${a}/v1/video/generations/${id}`, { headers: AUTH })).status, 200);
  });
});

test('502 and 503 modes answer like a proxy with a dead upstream; /__sim still works', async () => {
  await withSim({ ports: [0, 0] }, async (sim) => {
    const [a, b] = sim.urls as [string, string];
    for (const mode of ['502', '503'] as const) {
      const set = ok(await raw(`${b}/__sim/faults`, { method: 'POST', headers: AUTH, body: JSON.stringify({ port: 0, mode }) }));
      assert.equal(set.status, 200);
      const r = ok(await raw(`${a}/v1/video/generations/task_x`, { headers: AUTH }));
      assert.equal(r.status, Number(mode));
      assert.match(r.body.toString(), /<html>/);
      assert.equal(ok(await raw(`${a}/__sim/stats`, { headers: AUTH })).status, 200);
      assert.equal(ok(await raw(`${b}/v1/video/generations/task_x`, { headers: AUTH })).status, 400);
    }
    const state = json(await raw(`${a}/__sim/faults`, { headers: AUTH })) as { ports: Array<{ mode: string }> };
    assert.deepEqual(
      state.ports.map((p) => p.mode),
      ['503', 'up'],
    );
  });
});

test('hang accepts and never answers; other ports are unaffected', async () => {
  await withSim({ ports: [0, 0], portModes: ['hang', 'up'] }, async (sim) => {
    const [a, b] = sim.urls as [string, string];
    const t0 = Date.now();
    const r = await raw(`${a}/v1/video/generations/task_x`, { headers: AUTH, timeoutMs: 300 });
    assert.ok('error' in r);
    assert.equal(r.error, 'TIMEOUT');
    assert.ok(Date.now() - t0 >= 290);
    assert.equal(ok(await raw(`${b}/v1/video/generations/task_x`, { headers: AUTH })).status, 400);
    assert.equal(sim.stats().faults['port-hang'], 1);
    // close() must not wait for the hung request.
  });
});

test('a port can start refused and come up at run time through /__sim/faults', async () => {
  await withSim({ ports: [0, 0], portModes: ['up', 'refuse'] }, async (sim) => {
    const [a, b] = sim.urls as [string, string];
    const r = await raw(`${b}/v1/video/generations/task_x`, { headers: AUTH });
    assert.ok('error' in r && r.error === 'ECONNREFUSED');
    const set = ok(await raw(`${a}/__sim/faults`, { method: 'POST', headers: AUTH, body: JSON.stringify({ port: 1, mode: 'up' }) }));
    assert.equal(set.status, 200);
    assert.equal(ok(await raw(`${b}/v1/video/generations/task_x`, { headers: AUTH })).status, 400);
    const bad = ok(await raw(`${a}/__sim/faults`, { method: 'POST', headers: AUTH, body: JSON.stringify({ port: 5, mode: 'up' }) }));
    assert.equal(bad.status, 400);
  });
});
