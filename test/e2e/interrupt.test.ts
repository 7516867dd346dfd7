// Ctrl-C leaves the work resumable (exit 130, says how to resume); --detach returns at once and a
// background worker finishes the job while `status --watch` follows it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli, startCli } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';

const KEY = 'sk-test-interrupt-000000000';

describe('interrupting and detaching', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [3000, 4000], seed: 2 });

  const createsFor = (prefix: string) =>
    Object.entries(e2e.sim.stats().createsByPrompt)
      .filter(([p]) => p.startsWith(prefix))
      .map(([, n]) => n);

  it('Ctrl-C exits 130 and says how to resume; the same command then finishes without paying twice', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'ctrlc',
      baseUrls: e2e.sim.urls,
      items: [1, 2, 3].map((i) => ({ id: `c${i}`, prompt: `ctrlc ${i}` })),
    });
    const run = startCli(['run', job], { env: e2e.env });
    await run.waitFor(/in flight/, 60_000);
    run.child.kill('SIGINT');
    const stopped = await run.done;
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.match(stopped.stderr, new RegExp(`resumes with: reelflow run ${job.replace(/[.]/g, '\\.')}`));
    const resumed = await runCli(['run', job], { env: e2e.env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /3 of 3 succeeded/);
    assert.deepEqual(createsFor('ctrlc'), [1, 1, 1]);
  });

  it('--detach returns while the job runs on; status --watch follows it to the end', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'detached',
      baseUrls: e2e.sim.urls,
      items: [1, 2].map((i) => ({ id: `d${i}`, prompt: `detached ${i}` })),
    });
    const started = Date.now();
    const detached = await runCli(['run', job, '--detach'], { env: e2e.env });
    assert.equal(detached.code, 0, detached.stderr);
    assert.match(detached.stderr, /detached: follow it with `reelflow status/);
    assert.ok(Date.now() - started < 3000 + 15_000, 'returned without waiting for the renders');
    const watch = await runCli(['status', job, '--watch'], { env: e2e.env });
    assert.equal(watch.code, 0, watch.stderr);
    assert.match(watch.stdout, /detached: 2 of 2 succeeded/);
    assert.ok(existsSync(join(dir, 'out', '001-d1.mp4')) && existsSync(join(dir, 'out', '002-d2.mp4')));
    const json = await runCli(['status', job, '--json'], { env: e2e.env });
    const status = JSON.parse(json.stdout) as { state: string; counts: Record<string, number>; items: number };
    assert.equal(status.state, 'completed');
    assert.equal(status.counts.succeeded, 2);
    assert.equal(status.items, 2);
    for (const key of ['pending', 'creating', 'rendering', 'downloading', 'failed', 'timed_out', 'canceled', 'unknown']) {
      assert.equal(status.counts[key], 0, key);
    }
  });

  it('status of an unknown job id is one clear line and exit 2', async () => {
    const result = await runCli(['status', 'no-such-job'], { env: e2e.env });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /no job with id reelflow-no-such-job/);
    assert.ok(!/\n\s+at /.test(result.stderr), 'no stack trace without --verbose');
  });
});
