// Draining a worker (docs/deploy.md "Drain"): on SIGTERM a worker stops taking
// tasks and gives running activities `--shutdown-grace` to finish. A download the gateway takes
// 12 s to answer is cut by a worker with a grace of 1 s (it exits at once, nothing stored under the
// final name, the item not failed: worker/drain.ts) and taken over by one with a grace of 40 s,
// which exits only after the video is stored: longer than the 10 s reelflow used to give every
// worker. The built CLI against a real Temporal dev server and the simulator.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli, startCli, type CliResult } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';
import { until } from '../support/wait';

const KEY = 'sk-test-drain-0123456789';
const SLOW_DOWNLOAD_MS = 12_000;
const CONTENT = 'GET /v1/videos/:id/content';
const CREATE = 'POST /v1/video/generations';
const SLOW_CREATE_MS = 6_000;

describe('worker drain: --shutdown-grace (built CLI, real Temporal and simulator)', () => {
  const e2e = useTemporalAndSimulator(KEY, {
    ports: [0],
    renderMs: 300,
    faults: { slowMs: SLOW_DOWNLOAD_MS, scope: ['content'] },
  });
  const downloads = () => e2e.sim.stats().requests[CONTENT] ?? 0;

  /**
   * SIGTERM once the `n`th download request has reached the gateway; the worker's exit and how long
   * it took. When the request never comes, the job's status and the worker's log say why.
   */
  async function drainDuringDownload(job: string, grace: string, n: number): Promise<{ ended: CliResult; seconds: number }> {
    const worker = startCli(['worker', '--shutdown-grace', grace, '--log-format', 'json'], { env: e2e.env });
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      await until(() => downloads() >= n, 90_000, `download request ${n}`).catch(async (e: Error) => {
        const status = await runCli(['status', job, '--json'], { env: e2e.env });
        worker.child.kill('SIGTERM');
        const out = await worker.done;
        throw new Error(`${e.message}\n${status.stdout}${status.stderr}\n${out.stdout}\n${out.stderr}`);
      });
    } finally {
      worker.child.kill('SIGTERM');
    }
    const signalled = Date.now();
    const ended = await worker.done;
    return { ended, seconds: (Date.now() - signalled) / 1000 };
  }

  it('a long download is cut after a short grace and completed within a long one', { timeout: 240_000 }, async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'drained', baseUrls: e2e.sim.urls, items: [{ id: 'slow', prompt: 'a slow download' }] });
    const started = await runCli(['run', job, '--no-worker', '--detach'], { env: e2e.env });
    assert.equal(started.code, 0, started.stderr);
    const videos = () => readdirSync(join(dir, 'out')).filter((f) => f.endsWith('.mp4'));

    const short = await drainDuringDownload(job, '1s', 1);
    assert.equal(short.ended.code, 0, short.ended.stderr);
    assert.ok(short.seconds < SLOW_DOWNLOAD_MS / 1000 - 4, `a 1 s grace ended the worker after ${short.seconds} s`);
    assert.deepEqual(existsSync(join(dir, 'out')) ? videos() : [], [], 'the cut download left no video under its final name');

    const long = await drainDuringDownload(job, '40s', 2);
    assert.equal(long.ended.code, 0, long.ended.stderr);
    assert.ok(long.seconds > 10, `the worker waited for its download: ${long.seconds} s, more than the old fixed 10 s`);
    assert.ok(long.seconds < 40, `and no longer than the download: ${long.seconds} s`);
    assert.equal(videos().length, 1, 'the download finished within the grace, before the worker exited');
    assert.equal(downloads(), 2);

    // Any worker ends the job from there: the stored video is kept, not downloaded again.
    const finisher = startCli(['worker'], { env: e2e.env });
    try {
      const attached = await runCli(['run', job, '--no-worker'], { env: e2e.env });
      assert.equal(attached.code, 0, attached.stderr + attached.stdout);
      assert.match(attached.stdout, /drained: 1 of 1 succeeded/);
    } finally {
      finisher.child.kill('SIGTERM');
    }
    assert.equal((await finisher.done).code, 0);
    assert.equal(downloads(), 2);
    for (const run of [short, long]) assert.ok(!run.ended.stdout.includes(KEY) && !run.ended.stderr.includes(KEY));
  });

  it(
    'a create in flight when the worker stops is not cut: its answer is kept and the item rendered once',
    { timeout: 240_000 },
    async () => {
      // The gateway takes 6 s to answer a create, and makes the task whether or not anyone still listens.
      const before = e2e.sim.faults();
      e2e.sim.setFaults({ slowMs: SLOW_CREATE_MS, scope: ['create'] });
      try {
        const dir = tempDir();
        const job = writeJob(dir, {
          name: 'drained-create',
          baseUrls: e2e.sim.urls,
          items: [{ id: 'paid', prompt: 'a create in flight' }],
        });
        const started = await runCli(['run', job, '--no-worker', '--detach'], { env: e2e.env });
        assert.equal(started.code, 0, started.stderr);
        const earlier = e2e.sim.stats().requests[CREATE] ?? 0;
        const creates = () => (e2e.sim.stats().requests[CREATE] ?? 0) - earlier;
        const worker = startCli(['worker', '--shutdown-grace', '1s', '--log-format', 'json'], { env: e2e.env });
        try {
          await worker.waitFor(/polling task queue/, 60_000);
          await until(() => creates() >= 1, 90_000, 'the create request');
        } finally {
          worker.child.kill('SIGTERM');
        }
        const signalled = Date.now();
        const stopped = await worker.done;
        const seconds = (Date.now() - signalled) / 1000;
        assert.equal(stopped.code, 0, stopped.stderr);
        // The create may already be paid for: the stopping worker waits for its answer, past the grace.
        // The old worker cut it after 1 s and the item ended failed ("aborted"), its paid task lost.
        assert.ok(seconds > 3, `the worker waited for the create's answer: ${seconds} s`);
        e2e.sim.setFaults({ slowMs: 0 });

        const finisher = startCli(['worker'], { env: e2e.env });
        try {
          const attached = await runCli(['run', job, '--no-worker'], { env: e2e.env });
          assert.equal(attached.code, 0, attached.stderr + attached.stdout);
          assert.match(attached.stdout, /drained-create: 1 of 1 succeeded/);
        } finally {
          finisher.child.kill('SIGTERM');
        }
        assert.equal((await finisher.done).code, 0);
        assert.equal(creates(), 1, 'one create: the task the stopped worker asked for is the one rendered');
        assert.ok(!stopped.stdout.includes(KEY) && !stopped.stderr.includes(KEY));
      } finally {
        e2e.sim.setFaults(before);
      }
    },
  );

  it('a SIGTERM right after the worker says it polls is a stop (exit 0), not a kill', { timeout: 120_000 }, async () => {
    // The old worker listened for signals only after its first lines: 2 of 4 such SIGTERMs killed it.
    for (let i = 0; i < 3; i++) {
      const worker = startCli(['worker', '--shutdown-grace', '1s'], { env: e2e.env });
      await worker.waitFor(/polling task queue/, 60_000);
      worker.child.kill('SIGTERM');
      const stopped = await worker.done;
      assert.equal(stopped.code, 0, `try ${i + 1}: exit ${stopped.code}\n${stopped.stderr}`);
      assert.match(stopped.stderr, /reelflow worker: stopped/);
    }
  });

  it('refuses a --shutdown-grace that is not a duration, exit 2', async () => {
    const bad = await runCli(['worker', '--shutdown-grace', 'soon'], { env: e2e.env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--shutdown-grace "soon": not a duration; use e\.g\. 30s, 2m or 0s/);
  });
});
