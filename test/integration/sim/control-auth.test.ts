// The simulator's own control endpoints (docs/security.md, "In detail"): /__sim/stats lists every prompt and
// /__sim/faults switches faults, so both need the key like every other route; and `reelflow sim`
// says so when --host makes it reachable beyond this machine.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { isLoopbackHost } from '../../../cli/commands/sim';
import { AUTH, JSON_AUTH, createGeneral, ok, raw, withSim } from './helpers';

const FIXTURE = join(__dirname, 'fixtures', 'run-sim-cli.ts');
const PROMPT = 'a private prompt about the launch';

test('/__sim/stats and /__sim/faults answer 401 without the key, and nothing about the prompts', async () => {
  await withSim({ renderMs: 0 }, async (sim) => {
    const base = sim.urls[0] as string;
    await createGeneral(base, { model: 'seedance-1-0-pro-250528', prompt: PROMPT });
    const refused: Record<string, string>[] = [{}, { authorization: 'Bearer sk-not-the-key' }, { 'x-api-key': 'sk-not-the-key' }];
    for (const headers of refused) {
      const stats = ok(await raw(`${base}/__sim/stats`, { headers }));
      assert.equal(stats.status, 401, JSON.stringify(headers));
      assert.ok(!stats.body.toString('utf8').includes(PROMPT));
      assert.equal(ok(await raw(`${base}/__sim/faults`, { headers })).status, 401);
      const set = ok(await raw(`${base}/__sim/faults`, { method: 'POST', headers, body: JSON.stringify({ errorRate: 1 }) }));
      assert.equal(set.status, 401);
      const port = ok(await raw(`${base}/__sim/faults`, { method: 'POST', headers, body: JSON.stringify({ port: 0, mode: 'hang' }) }));
      assert.equal(port.status, 401);
    }
    assert.equal(sim.faults().errorRate, undefined, 'faults unchanged');
    const stats = ok(await raw(`${base}/__sim/stats`, { headers: AUTH }));
    assert.equal(stats.status, 200);
    assert.ok(stats.body.toString('utf8').includes(PROMPT));
    assert.equal(ok(await raw(`${base}/__sim/faults`, { method: 'POST', headers: JSON_AUTH, body: '{"errorRate":0}' })).status, 200);
    assert.equal(sim.faults().errorRate, 0);
  });
});

test('loopback hosts', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) assert.ok(isLoopbackHost(host), host);
  for (const host of ['0.0.0.0', '::', '192.168.1.5', 'sim.example.com', '']) assert.ok(!isLoopbackHost(host), host);
});

test('reelflow sim --host off loopback warns before it listens', async () => {
  // 192.0.2.1 (TEST-NET-1) is on no interface here: the bind fails, after the warning.
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, 'sim', '--host', '192.0.2.1', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: join(__dirname, '../../..'),
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout.on('data', (c: Buffer) => (err += c.toString()));
  await new Promise<void>((resolve) => child.on('exit', () => resolve()));
  assert.match(
    err,
    /sim: warning: --host 192\.0\.2\.1 is not a loopback address: whoever can reach it and knows the key can create tasks, read every prompt/,
  );
});
