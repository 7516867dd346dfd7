// Durability as a user meets it: kill -9 any process, restart the server, lose the primary, lose
// a create response, cancel; the same command finishes the job without paying twice.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startSimulator } from '../../sim';
import { ensureDevServer } from '../../worker/dev-server';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli, startCli } from '../support/cli';
import { sha256File } from '../support/media';
import { tempDir, writeJob } from '../support/jobs';
import { until } from '../support/wait';

const KEY = 'sk-test-durability-abcdef0123';

type Row = { key: string; state: string; file: string | null; sha256: string | null; error: { kind: string; message: string } | null };

function manifest(dir: string): Row[] {
  return readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
}

function latest(dir: string): Map<string, Row> {
  return new Map(manifest(dir).map((r) => [r.key, r]));
}

function items(prefix: string, n: number) {
  return Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i + 1}`, prompt: `${prefix} prompt ${i + 1}` }));
}

describe('durability', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0, 0], renderMs: [1500, 3000], seed: 11 });

  const createsFor = (prefix: string) =>
    Object.entries(e2e.sim.stats().createsByPrompt)
      .filter(([p]) => p.startsWith(`${prefix} `))
      .map(([, n]) => n);

  it('kill -9 of the running command mid-run: running it again finishes with one create per item', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'killed', baseUrls: e2e.sim.urls, items: items('killed', 8), maxInFlight: 4 });
    const polledBefore = new Set(Object.keys(e2e.sim.stats().pollsByTask));
    const first = startCli(['run', job], { env: e2e.env });
    // Kill once every slot's create has completed (its task is being polled). A create still in
    // flight at the kill would rightly end `unknown`: the gateway may have started that render.
    await until(
      () => Object.keys(e2e.sim.stats().pollsByTask).filter((t) => !polledBefore.has(t)).length >= 4,
      30_000,
      'four polled tasks',
    );
    first.child.kill('SIGKILL');
    await first.done;
    const second = await runCli(['run', job], { env: e2e.env });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /already running: attached/);
    const creates = createsFor('killed');
    assert.equal(creates.length, 8);
    assert.ok(
      creates.every((n) => n === 1),
      `creates per item: ${creates.join(',')}`,
    );
    const rows = latest(dir);
    assert.equal(rows.size, 8);
    for (const row of rows.values()) {
      assert.equal(row.state, 'succeeded');
      assert.equal(row.sha256, sha256File(join(dir, 'out', row.file!)));
    }
  });

  it('the Temporal server restarts mid-run (same SQLite file): the job completes', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'restarted', baseUrls: e2e.sim.urls, items: items('restarted', 6), maxInFlight: 3 });
    const run = startCli(['run', job], { env: e2e.env });
    await until(() => createsFor('restarted').length >= 2, 30_000, 'two creates');
    await e2e.temporal.server.stop();
    await new Promise((r) => setTimeout(r, 1000));
    e2e.temporal.server = await ensureDevServer({ stateDir: e2e.temporal.stateDir, foreground: true, startTimeoutMs: 90_000 });
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);
    assert.ok(createsFor('restarted').every((n) => n === 1));
    assert.equal([...latest(dir).values()].filter((r) => r.state === 'succeeded').length, 6);
  });

  it('the primary base address dies mid-run: no item fails, later calls use the alternate', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'failover', baseUrls: e2e.sim.urls, items: items('failover', 6), maxInFlight: 6 });
    const run = startCli(['run', job], { env: e2e.env });
    await until(() => createsFor('failover').length >= 6, 30_000, 'all creates');
    await e2e.sim.setPortMode(0, 'refuse');
    try {
      const result = await run.done;
      assert.equal(result.code, 0, result.stderr);
    } finally {
      await e2e.sim.setPortMode(0, 'up');
    }
    const rows = [...latest(dir).values()];
    assert.equal(rows.filter((r) => r.state === 'succeeded').length, 6);
    assert.ok(createsFor('failover').every((n) => n === 1));
    const bases = new Set(readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8').match(/"base_url":"[^"]+"/g));
    assert.ok(
      [...bases].some((b) => b.includes(new URL(e2e.sim.urls[1]!).port)),
      `bases used: ${[...bases].join(' ')}`,
    );
  });

  it('a create whose response is lost ends unknown; --retry-unknown renders it', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'lost', baseUrls: e2e.sim.urls, items: [{ id: 'lost-1', prompt: 'lost prompt 1' }] });
    e2e.sim.setFaults({ lostCreateRate: 1 });
    const first = await runCli(['run', job], { env: e2e.env });
    e2e.sim.setFaults({ lostCreateRate: 0 });
    assert.equal(first.code, 1, first.stderr);
    assert.equal(latest(dir).get('lost-1')?.state, 'unknown');
    assert.match(first.stdout, /--retry-unknown/);
    assert.deepEqual(createsFor('lost'), [1], 'the lost create reached the gateway exactly once');
    const plain = await runCli(['run', job], { env: e2e.env });
    assert.equal(plain.code, 1);
    assert.deepEqual(createsFor('lost'), [1], 'a plain re-run does not pay again');
    const retried = await runCli(['run', job, '--retry-unknown'], { env: e2e.env });
    assert.equal(retried.code, 0, retried.stderr);
    assert.deepEqual(createsFor('lost'), [2]);
  });

  it('with retries.create: always a lost create is retried automatically', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'always',
      baseUrls: e2e.sim.urls,
      items: [{ id: 'always-1', prompt: 'always prompt 1' }],
      extra: 'retries:\n  create: always',
    });
    e2e.sim.setFaults({ lostCreateRate: 1 });
    const run = startCli(['run', job], { env: e2e.env });
    await until(() => (createsFor('always')[0] ?? 0) >= 1, 30_000, 'the first create');
    e2e.sim.setFaults({ lostCreateRate: 0 });
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);
    assert.ok((createsFor('always')[0] ?? 0) >= 2, 'created again after the lost response');
    assert.equal(latest(dir).get('always-1')?.state, 'succeeded');
  });

  it('a second run of a running job attaches instead of starting again', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'attach', baseUrls: e2e.sim.urls, items: items('attach', 4) });
    const first = startCli(['run', job], { env: e2e.env });
    await until(() => createsFor('attach').length >= 1, 30_000, 'a create');
    const second = await runCli(['run', job, '--no-worker'], { env: e2e.env });
    const firstResult = await first.done;
    assert.equal(firstResult.code, 0, firstResult.stderr);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /already running: attached/);
    assert.ok(createsFor('attach').every((n) => n === 1));
  });

  it('cancel: in-flight items end canceled and nothing is created after it', async () => {
    const dir = tempDir();
    const slow = await startSimulator({ ports: [0], keys: [KEY], renderMs: 60_000, seed: 3 });
    try {
      const job = writeJob(dir, { name: 'canceled', baseUrls: slow.urls, items: items('canceled', 6), maxInFlight: 2 });
      const run = startCli(['run', job], { env: e2e.env });
      const creates = () => Object.values(slow.stats().createsByPrompt).reduce((a, b) => a + b, 0);
      await until(() => creates() >= 2, 30_000, 'two creates');
      const cancel = await runCli(['cancel', job], { env: e2e.env });
      assert.equal(cancel.code, 0, cancel.stderr);
      const result = await run.done;
      assert.equal(result.code, 1, result.stderr);
      assert.equal(creates(), 2, 'no create after the cancel');
      const rows = [...latest(dir).values()];
      assert.equal(rows.length, 2);
      assert.ok(
        rows.every((r) => r.state === 'canceled'),
        rows.map((r) => r.state).join(','),
      );
      assert.ok(!readdirSync(join(dir, 'out')).some((f) => f.endsWith('.mp4')));
    } finally {
      await slow.close();
    }
  });

  it('cancel during a create: the item ends canceled (not failed) and says the render may have started', async () => {
    const dir = tempDir();
    // Creates take 20 s to answer; everything else (the run's preflight) answers at once. A port
    // switched to 'hang' after the preflight's first request raced the rest of the preflight on a
    // loaded machine (CI: the run never started its job, and cancel found no workflow).
    const hung = await startSimulator({ ports: [0], keys: [KEY], renderMs: 1000, seed: 4, faults: { slowMs: 20_000, scope: ['create'] } });
    try {
      const job = writeJob(dir, { name: 'cancel-creating', baseUrls: hung.urls, items: items('cancel-creating', 2), maxInFlight: 2 });
      const run = startCli(['run', job], { env: e2e.env });
      await until(() => (hung.stats().requests['POST /v1/video/generations'] ?? 0) >= 2, 60_000, 'two creates in flight');
      const cancel = await runCli(['cancel', job], { env: e2e.env });
      assert.equal(cancel.code, 0, cancel.stderr);
      const result = await run.done;
      assert.equal(result.code, 1, result.stderr);
      const rows = [...latest(dir).values()];
      assert.equal(rows.length, 2, JSON.stringify(rows));
      for (const row of rows) {
        assert.equal(row.state, 'canceled', JSON.stringify(row));
        assert.match(row.error?.message ?? '', /canceled while the create was in flight: the gateway may have started/);
      }
    } finally {
      await hung.close();
    }
  });
});
