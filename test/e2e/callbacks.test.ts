// Callbacks in (docs/callbacks.md): `run --callbacks` with its own worker and listener, a real
// Temporal server and the simulator, which calls each create's metadata.callback_url back as
// Seedance does through new-api, with its callback faults. A callback is a hint: the job ends the
// same with every callback lost, forged or repeated, and no state is believed without a check.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { SimStatsExt } from '../../sim';
import { isAlive, runCli, startCli } from '../support/cli';
import { until } from '../support/wait';
import { freePort } from '../../worker/dev-server';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';

const KEY = 'sk-test-e2e-callbacks-0123456789';
const ITEMS = 4;
const CONTENT = 'GET /v1/videos/:id/content';
const RETRIEVE = 'GET /v1/video/generations/:id';

interface Row {
  state: string;
  polls: number;
  task_id: string;
  bytes: number | null;
}

describe('callbacks (run --callbacks, real Temporal, simulator over HTTP)', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [2_500, 3_500], seed: 13 });

  /** Runs a job of ITEMS items; `backstop` is polling.backstop; callbacks: true unless `off`. */
  async function runJob(name: string, options: { backstop: string; off?: boolean }) {
    const dir = tempDir();
    const job = writeJob(dir, {
      name,
      baseUrls: e2e.sim.urls,
      items: Array.from({ length: ITEMS }, (_, i) => ({ id: `i${i + 1}`, prompt: `${name} shot ${i + 1}` })),
      polling: `polling:\n  initial: 500ms\n  max: 2s\n  timeout: 5m\n  backstop: ${options.backstop}`,
      extra: options.off ? '' : 'models:\n  seedance-1-0-pro-250528:\n    callbacks: true',
    });
    const before = e2e.sim.stats();
    const env = { ...e2e.env, XDG_CONFIG_HOME: dir };
    const result = await runCli(['run', job, ...(options.off ? [] : ['--callbacks', '127.0.0.1:0'])], { env });
    const after = e2e.sim.stats();
    const rows = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    return { result, rows, before, after, dir };
  }

  const delta = (a: Record<string, number>, b: Record<string, number>, key: string) => (b[key] ?? 0) - (a[key] ?? 0);
  const checksPerTask = (rows: Row[], before: SimStatsExt, after: SimStatsExt) =>
    rows.map((r) => delta(before.pollsByTask, after.pollsByTask, r.task_id));

  it('with every final callback lost, the job completes by polling (polling.backstop)', async () => {
    e2e.sim.setFaults({ callbackLostRate: 1 });
    try {
      const { result, rows, before, after } = await runJob('cb-lost', { backstop: '2s' });
      assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
      assert.match(result.stderr, /callbacks: listening on http:\/\/127\.0\.0\.1:\d+/);
      assert.deepEqual(
        rows.map((r) => r.state),
        Array(ITEMS).fill('succeeded'),
      );
      assert.equal(delta(before.callbacks, after.callbacks, 'lost'), ITEMS, 'every final callback was lost');
      assert.equal(delta(before.callbackAnswers, after.callbackAnswers, 'final 200'), 0, 'no final callback reached reelflow');
      assert.equal(delta(before.requests, after.requests, CONTENT), ITEMS, 'each video downloaded once');
      assert.ok(
        checksPerTask(rows, before, after).every((n) => n >= 1),
        'each render was noticed by a status check',
      );
    } finally {
      e2e.sim.setFaults({ callbackLostRate: 0 });
    }
  });

  it('forged and duplicated callbacks: refused or harmless; nothing downloaded twice, nothing believed without a check', async () => {
    e2e.sim.setFaults({ callbackForgedRate: 1, callbackDuplicateRate: 1, callbackOutOfOrderRate: 0 });
    try {
      // A backstop past the renders: only a callback can wake a check before it.
      const { result, rows, before, after } = await runJob('cb-forged', { backstop: '60s' });
      assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
      assert.deepEqual(
        rows.map((r) => r.state),
        Array(ITEMS).fill('succeeded'),
      );
      // Each forged callback (a wrong token, claiming success half-way through) was refused.
      assert.equal(delta(before.callbackAnswers, after.callbackAnswers, 'forged 401'), ITEMS);
      // Of three copies of each final callback, the first woke a check; the rest found the render ended.
      assert.equal(delta(before.callbacks, after.callbacks, 'sent-final'), 3 * ITEMS);
      assert.equal(delta(before.requests, after.requests, CONTENT), ITEMS, 'each video downloaded once');
      assert.ok(rows.every((r) => (r.bytes ?? 0) > 0));
      // Nothing believed without a check: every render's end was seen by a status check of its own,
      // never sooner than the forged claim of success (which would have ended it half-way, unchecked).
      const checks = checksPerTask(rows, before, after);
      assert.ok(
        checks.every((n) => n >= 1 && n <= 2),
        `checks per task: ${checks.join(', ')}`,
      );
      assert.deepEqual(
        rows.map((r) => r.polls),
        checks,
      );
    } finally {
      e2e.sim.setFaults({ callbackForgedRate: 0, callbackDuplicateRate: 0 });
    }
  });

  it('with callbacks on, checks per task drop below polling alone', async () => {
    const polled = await runJob('cb-off', { backstop: '60s', off: true });
    assert.equal(polled.result.code, 0, `${polled.result.stdout}\n${polled.result.stderr}`);
    const woken = await runJob('cb-on', { backstop: '60s' });
    assert.equal(woken.result.code, 0, `${woken.result.stdout}\n${woken.result.stderr}`);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const off = mean(checksPerTask(polled.rows, polled.before, polled.after));
    const on = mean(checksPerTask(woken.rows, woken.before, woken.after));
    assert.ok(on <= 1.5, `callbacks on: ${on} checks per task`);
    assert.ok(on < off, `callbacks on ${on} < polling alone ${off}`);
    assert.equal(delta(woken.before.callbackAnswers, woken.after.callbackAnswers, 'final 200'), ITEMS);
    assert.equal(delta(polled.before.callbacks, polled.after.callbacks, 'sent-final'), 0, 'without callbacks: true no address is sent');
    assert.equal(delta(woken.before.requests, woken.after.requests, RETRIEVE), ITEMS * on);
  });

  it("a fleet behind one address: one worker's callback listener takes the callbacks of creates another worker made", async () => {
    const dir = tempDir();
    const secret = { REELFLOW_CALLBACK_SECRET: 'fleet-secret-for-the-e2e-test-0123456789' };
    const ingressPort = await freePort();
    // The listener's worker polls another task queue: it makes no create of this job, and still
    // checks the tokens the other worker minted and signals its renders through Temporal.
    const listening = startCli(['worker', '--callbacks', `127.0.0.1:${ingressPort}`], {
      env: { ...e2e.env, ...secret, REELFLOW_TASK_QUEUE: 'elsewhere', XDG_CONFIG_HOME: dir },
    });
    const rendering = startCli(['worker', '--callbacks', '127.0.0.1:0', '--callback-url', `http://127.0.0.1:${ingressPort}/fleet`], {
      env: { ...e2e.env, ...secret, XDG_CONFIG_HOME: dir },
    });
    try {
      await Promise.all([listening.waitFor(/polling task queue/), rendering.waitFor(/polling task queue/)]);
      const job = writeJob(dir, {
        name: 'cb-fleet',
        baseUrls: e2e.sim.urls,
        items: Array.from({ length: ITEMS }, (_, i) => ({ id: `f${i + 1}`, prompt: `fleet shot ${i + 1}` })),
        polling: 'polling:\n  initial: 500ms\n  max: 2s\n  timeout: 5m\n  backstop: 60s',
        extra: 'models:\n  seedance-1-0-pro-250528:\n    callbacks: true',
      });
      const before = e2e.sim.stats();
      const result = await runCli(['run', job, '--no-worker'], { env: { ...e2e.env, XDG_CONFIG_HOME: dir } });
      const after = e2e.sim.stats();
      assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
      const rows = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Row);
      assert.deepEqual(
        rows.map((r) => r.state),
        Array(ITEMS).fill('succeeded'),
      );
      // Every final callback went to the one public address and was taken there; with a 60 s
      // backstop, the renders of 2.5-3.5 s were each noticed by the one check it woke.
      assert.equal(delta(before.callbackAnswers, after.callbackAnswers, 'final 200'), ITEMS);
      assert.deepEqual(checksPerTask(rows, before, after), Array(ITEMS).fill(1));
    } finally {
      for (const worker of [listening, rendering]) worker.child.kill('SIGTERM');
      await Promise.all([listening.done, rendering.done]);
    }
  });

  it('refuses a listener beyond loopback without --callback-url and --callbacks-public (exit 2)', async () => {
    const dir = tempDir();
    const job = join(dir, 'x.yaml');
    writeFileSync(job, 'version: 1\n');
    const worker = await runCli(['worker', '--callbacks', '0.0.0.0:8790'], { env: e2e.env });
    assert.equal(worker.code, 2, worker.stderr);
    assert.match(worker.stderr, /--callback-url.*--callbacks-public/);
    const fleet = await runCli(['run', job, '--no-worker', '--callbacks', '8790'], { env: e2e.env });
    assert.equal(fleet.code, 2, fleet.stderr);
    assert.match(fleet.stderr, /give --callbacks to `reelflow worker`/);
  });

  it('run --detach --callbacks: the background worker listens, and the callbacks wake its renders', async () => {
    const dir = tempDir();
    const name = 'cb-detach';
    const job = writeJob(dir, {
      name,
      baseUrls: e2e.sim.urls,
      items: Array.from({ length: ITEMS }, (_, i) => ({ id: `d${i + 1}`, prompt: `detach shot ${i + 1}` })),
      // A backstop past the test's wait: only callbacks can end these renders in time.
      polling: 'polling:\n  initial: 500ms\n  max: 2s\n  timeout: 5m\n  backstop: 5m',
      extra: 'models:\n  seedance-1-0-pro-250528:\n    callbacks: true',
    });
    const env: NodeJS.ProcessEnv = { ...e2e.env, XDG_CONFIG_HOME: dir };
    const before = e2e.sim.stats();
    const detached = await runCli(['run', job, '--detach', '--callbacks', '127.0.0.1:0'], { env });
    assert.equal(detached.code, 0, `${detached.stdout}\n${detached.stderr}`);
    assert.match(detached.stderr, /callbacks: the background worker listens/);
    const pidFile = join(String(env.REELFLOW_STATE_DIR), 'logs', `worker-reelflow-${name}.pid`);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    try {
      const manifest = join(dir, 'out', 'manifest.jsonl');
      await until(
        () => existsSync(manifest) && readFileSync(manifest, 'utf8').trim().split('\n').length === ITEMS,
        90_000,
        'every item recorded',
      );
      const rows = readFileSync(manifest, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Row);
      assert.deepEqual(
        rows.map((r) => r.state),
        Array(ITEMS).fill('succeeded'),
      );
      const after = e2e.sim.stats();
      assert.equal(delta(before.callbackAnswers, after.callbackAnswers, 'final 200'), ITEMS, 'each final callback taken');
      const log = readFileSync(join(String(env.REELFLOW_STATE_DIR), 'logs', `worker-reelflow-${name}.log`), 'utf8');
      assert.match(log, /callbacks: listening on http:\/\/127\.0\.0\.1:\d+/);
      await until(() => !isAlive(pid), 60_000, 'the background worker to exit once the job ended');
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGTERM');
    }
  });
});
