// Limits shared by jobs (docs/limits.md): two jobs on one gateway key, each run by its own `reelflow
// run` (its own worker, on a task queue of its own), share concurrency.shared through the key's
// limiter workflow. Real parts: a Temporal dev server, the simulator (which counts the renders in
// flight and when each create came), the built command.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { LIMITER_TASK_QUEUE } from '../../activities/limiter';
import { stableKeyFingerprint } from '../../activities/key-fingerprint';
import { jobWorkflowId } from '../../workflows/ids';
import { LimiterWorkflow } from '../../workflows/limiter';
import { runCli, startCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir } from '../support/jobs';
import { until } from '../support/wait';

const KEY = 'sk-test-shared-limits-0123456789';

function writeSharedJob(dir: string, name: string, baseUrl: string, items: number, shared: string): string {
  const text = [
    'version: 1',
    `name: ${name}`,
    'gateway:',
    `  base_urls: [${baseUrl}]`,
    'defaults:',
    '  model: seedance-1-0-pro-250528',
    '  seconds: "5"',
    'concurrency:',
    '  max_in_flight: 10',
    ...(shared ? ['  shared:', ...shared.split('\n').map((l) => `    ${l}`)] : []),
    'polling:\n  initial: 500ms\n  max: 1s\n  timeout: 5m',
    `output:\n  dir: ./out-${name}`,
    'items:',
    ...Array.from({ length: items }, (_, i) => `  - prompt: "${name} shot ${i + 1}"`),
    '',
  ].join('\n');
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, text);
  return path;
}

/** Most creates in any 60 s. */
function mostCreatesInAMinute(times: number[]): number {
  return Math.max(0, ...times.map((start) => times.filter((t) => t >= start && t < start + 60_000).length));
}

describe('limits shared by the jobs on one gateway key', () => {
  const e2e = useTemporalAndSimulator(KEY, { renderMs: [2500, 3500], seed: 27 });
  let client: Client;
  let limiters: () => Promise<string[]>;

  before(async () => {
    client = new Client({ connection: await Connection.connect({ address: e2e.temporal.address }) });
    limiters = async () => {
      const ids: string[] = [];
      for await (const w of client.workflow.list({ query: "WorkflowType = 'LimiterWorkflow'" })) ids.push(w.workflowId);
      return ids;
    };
  });
  after(async () => {
    await client?.connection.close();
  });

  it('a job without concurrency.shared starts no limiter', async () => {
    const dir = tempDir('reelflow-shared-');
    const job = writeSharedJob(dir, 'unshared', e2e.sim.urls[0]!, 2, '');
    const result = await runCli(['run', job], { env: e2e.env, cwd: dir });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(await limiters(), []);
  });

  it('two jobs with a shared limit of 3 never have more than 3 renders in flight, and both finish', async () => {
    const dir = tempDir('reelflow-shared-');
    const before = e2e.sim.stats().tasksCreated;
    const runs = ['north', 'south'].map((name) =>
      startCli(['run', writeSharedJob(dir, name, e2e.sim.urls[0]!, 6, 'max_in_flight: 3')], { env: e2e.env, cwd: dir }),
    );
    const results = await Promise.all(runs.map((r) => r.done));
    for (const result of results) assert.equal(result.code, 0, result.stderr);
    const stats = e2e.sim.stats();
    assert.equal(stats.tasksCreated - before, 12);
    // Each job alone would have had its 6 in flight at once (max_in_flight: 10).
    assert.equal(stats.peakRendersInFlight, 3);
    // One limiter for the key, named by a fingerprint of it, never by the key.
    const ids = await limiters();
    assert.equal(ids.length, 1);
    assert.ok(!ids[0]!.includes(KEY), ids[0]);
    for (const result of results) assert.ok(!`${result.stdout}${result.stderr}`.includes(KEY));
  });

  it('a permit held by a render whose workflow is terminated is freed within the lease', async () => {
    const dir = tempDir('reelflow-shared-');
    // The key's limiter with a 3 s lease, started before the job asks it (the job's ask signals it).
    const limiterId = `reelflow-limit/${stableKeyFingerprint(KEY, `reelflow shared limit\n${e2e.sim.urls[0]}`)}`;
    await client.workflow.start(LimiterWorkflow, {
      workflowId: limiterId,
      taskQueue: LIMITER_TASK_QUEUE,
      args: [{ leaseMs: 3_000 }],
      // The one the jobs above used, idle now, is replaced.
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
    });
    const createdBefore = e2e.sim.stats().tasksCreated;
    const run = startCli(['run', writeSharedJob(dir, 'lease', e2e.sim.urls[0]!, 2, 'max_in_flight: 1')], { env: e2e.env, cwd: dir });
    try {
      await until(() => e2e.sim.stats().tasksCreated > createdBefore, 60_000, 'the first create');
      const jobId = jobWorkflowId('lease');
      // Which item got the permit: the one whose workflow has created.
      const progress = await client.workflow.getHandle(jobId).query<{ inFlight: Array<{ workflowId: string }> }>('progress');
      assert.equal(progress.inFlight.length, 2);
      const states = await Promise.all(
        progress.inFlight.map(async ({ workflowId }) => ({
          workflowId,
          phase: (await client.workflow.getHandle(workflowId).query<{ phase: string }>('itemStatus')).phase,
        })),
      );
      const holding = states.find((s) => s.phase !== 'pending');
      assert.ok(holding, JSON.stringify(states));
      const terminatedAt = Date.now();
      await client.workflow.getHandle(holding.workflowId).terminate('test: a holder that never gives its permit back');
      // The render not holding waited; the lease (3 s) and the check free the permit, and it creates.
      await until(() => e2e.sim.stats().tasksCreated > createdBefore + 1, 30_000, 'the second create');
      const waited = Date.now() - terminatedAt;
      assert.ok(waited < 3_000 + 5_000, `the second create came ${waited} ms after the holder was terminated`);
      assert.deepEqual(
        [...new Set(await limiters())].filter((id) => !id.includes('/seedance')),
        [limiterId],
      );
    } finally {
      run.child.kill('SIGKILL');
      await run.done;
    }
  });

  it('creates per minute are shared: two jobs with creates_per_minute 4 make at most 4 creates in any minute', async () => {
    const dir = tempDir('reelflow-shared-');
    const from = e2e.sim.stats().createTimes.length;
    const runs = ['east', 'west'].map((name) =>
      startCli(['run', writeSharedJob(dir, name, e2e.sim.urls[0]!, 3, 'creates_per_minute: 4\nper: model')], { env: e2e.env, cwd: dir }),
    );
    const results = await Promise.all(runs.map((r) => r.done));
    for (const result of results) assert.equal(result.code, 0, result.stderr);
    const times = e2e.sim.stats().createTimes.slice(from);
    assert.equal(times.length, 6);
    assert.equal(mostCreatesInAMinute(times), 4, JSON.stringify(times.map((t) => t - times[0]!)));
    // The last two waited for the first grants to leave the minute.
    assert.ok(times[5]! - times[0]! >= 59_000, JSON.stringify(times.map((t) => t - times[0]!)));
  });
});
