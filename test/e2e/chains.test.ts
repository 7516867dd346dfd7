// Chains of shots on real parts (docs/chains.md): a real Temporal dev server, a worker in this
// process and the simulator over HTTP. Each dependent's create carries the previous shot's last
// frame, byte for byte the last decoded frame of its stored video; a failed shot blocks the rest of
// its chain, and a run with --retry-failed renders from it on, nothing else. The job file cannot
// say `image: {last_frame_of: ...}` yet here, so the worker's plan pages get their needs from the
// test (the wrapper below): everything after the page is the real code.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Worker } from '@temporalio/worker';
import { acceptKeylessJobsInThisWorker } from '../../activities/job-key-check';
import { lastFrame } from '../../media/frames';
import { workflowSource } from '../../worker/bundle';
import { connectClient, connectWorker } from '../../worker/temporal';
import { jobWorkflowId } from '../../workflows/ids';
import { JobWorkflow, progressQuery } from '../../workflows/job';
import type { JobInput, JobProgress, JobResult } from '../../workflows/types';
import { chainOf as chainShots, chainedActivities, type ChainSpec } from '../support/chain-activities';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';
import { until } from '../support/wait';

const KEY = 'sk-test-chains-0123456789';
const QUEUE = 'chains';
const POLLS = 'polling:\n  initial: 100ms\n  max: 300ms\n  timeout: 5m';

/** What each item of the jobs in this file needs (the keys are unique across them). */
const spec: ChainSpec = {};
function chainOf(prefix: string, n: number): Array<{ id: string; prompt: string }> {
  const chain = chainShots(prefix, n);
  Object.assign(spec, chain.needs);
  return chain.shots;
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

type Row = { key: string; state: string; file: string | null };
function rows(dir: string): Row[] {
  return readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
}

describe('chains of shots', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [300, 700], seed: 3 });
  // Nested, so the worker stops (its after) before the server and the simulator do (the outer after).
  describe('on a worker of this process', () => chainTests(e2e));
});

function chainTests(e2e: ReturnType<typeof useTemporalAndSimulator>): void {
  let worker: Worker;
  let running: Promise<void>;
  let client: Awaited<ReturnType<typeof connectClient>>;
  let connection: Awaited<ReturnType<typeof connectWorker>>;

  before(async () => {
    process.env.GATEWAY_API_KEY = KEY;
    acceptKeylessJobsInThisWorker(true);
    const target = {
      address: e2e.temporal.address,
      namespace: 'default',
      connectionOptions: { address: e2e.temporal.address },
      description: 'test',
    };
    client = await connectClient(target);
    connection = await connectWorker(target);
    worker = await Worker.create({
      connection,
      namespace: 'default',
      taskQueue: QUEUE,
      ...workflowSource(),
      activities: chainedActivities(() => spec),
    });
    running = worker.run();
  });
  after(async () => {
    worker.shutdown();
    await running;
    // Open connections would keep the test process alive after its last test.
    await connection.close();
    await client.connection.close();
  });

  const run = (name: string, input: Omit<JobInput, 'runDate'>): Promise<JobResult> =>
    client.workflow.execute(JobWorkflow, {
      taskQueue: QUEUE,
      workflowId: `${jobWorkflowId(name)}-${Date.now()}`,
      args: [{ ...input, runDate: '2026-11-28' }],
    });

  /** Per shot: the first frame its (latest) create carried. */
  const firstFrameOf = (prompt: string) => {
    const creates = e2e.sim.stats().contentByPrompt[prompt] ?? [];
    return creates.at(-1)?.find((c) => c.role === 'first_frame')?.sha256;
  };

  it('a chain of six: each create carries the last decoded frame of the shot before, every shot created once', async () => {
    const dir = tempDir();
    const shots = chainOf('six', 6);
    const job = writeJob(dir, { name: 'chain-six', baseUrls: e2e.sim.urls, items: shots, maxInFlight: 4, polling: POLLS });
    const handle = await client.workflow.start(JobWorkflow, {
      taskQueue: QUEUE,
      workflowId: `${jobWorkflowId('chain-six')}-${Date.now()}`,
      args: [{ jobFile: job, runDate: '2026-11-28' }],
    });
    // While shot 1 renders, the others wait, each on the shot before it (what status shows).
    let waiting: JobProgress['waiting'];
    await until(
      async () => {
        waiting = (await handle.query(progressQuery)).waiting;
        return waiting?.length === 5;
      },
      60_000,
      'five shots waiting',
    );
    assert.deepEqual(
      waiting!.map((w) => [w.key, w.waitsOn]),
      [2, 3, 4, 5, 6].map((k) => [`six-${k}`, `six-${k - 1}`]),
    );
    const result = await handle.result();
    assert.equal(result.counts.succeeded, 6, JSON.stringify(result));
    const stats = e2e.sim.stats();
    for (const shot of shots) assert.equal(stats.createsByPrompt[shot.prompt], 1, shot.prompt);
    assert.equal(firstFrameOf('six 1'), undefined);
    const files = new Map(rows(dir).map((r) => [r.key, r.file!]));
    for (let k = 2; k <= 6; k++) {
      const png = join(dir, `last-${k - 1}.png`);
      await lastFrame(join(dir, 'out', files.get(`six-${k - 1}`)!), png);
      assert.equal(firstFrameOf(`six ${k}`), sha256(png), `shot ${k} starts from the last frame of shot ${k - 1}`);
    }
  });

  it('shot 3 of 6 fails: 4-6 blocked naming it; --retry-failed renders 3-6 only', async () => {
    const dir = tempDir();
    const shots = chainOf('fails', 6);
    const job = writeJob(dir, { name: 'chain-fails', baseUrls: e2e.sim.urls, items: shots, maxInFlight: 4, polling: POLLS });
    e2e.sim.setFaults({ failPrompts: ['fails 3'] });
    const first = await run('chain-fails', { jobFile: job });
    e2e.sim.setFaults({ failPrompts: [] });
    assert.deepEqual(
      { succeeded: first.counts.succeeded, failed: first.counts.failed, blocked: first.counts.blocked },
      { succeeded: 2, failed: 1, blocked: 3 },
    );
    assert.deepEqual(
      first.blocked?.map((b) => [b.key, b.blockedBy]),
      [
        ['fails-4', 'fails-3'],
        ['fails-5', 'fails-3'],
        ['fails-6', 'fails-3'],
      ],
    );
    assert.match(first.blocked![0]!.why, /fails-3 ended failed/);
    for (const k of [4, 5, 6]) assert.equal(e2e.sim.stats().createsByPrompt[`fails ${k}`], undefined, `shot ${k} never created`);

    // A plain run again leaves the failed shot as it is: its chain stays blocked, nothing is created.
    const plain = await run('chain-fails', { jobFile: job });
    assert.equal(plain.counts.blocked, 3);
    assert.equal(e2e.sim.stats().createsByPrompt['fails 3'], 1);

    const retry = await run('chain-fails', { jobFile: job, retryStates: ['failed'] });
    assert.equal(retry.counts.succeeded, 4, JSON.stringify(retry));
    assert.equal(retry.counts.skipped, 2);
    const creates = e2e.sim.stats().createsByPrompt;
    assert.deepEqual(
      shots.map((s) => creates[s.prompt]),
      [1, 1, 2, 1, 1, 1],
    );
    // Shot 3 starts from shot 2's frame, rendered by the first run; shot 4 from shot 3's new render.
    const files = new Map(rows(dir).map((r) => [r.key, r.file!]));
    for (const k of [3, 4]) {
      const png = join(dir, `last-${k - 1}.png`);
      await lastFrame(join(dir, 'out', files.get(`fails-${k - 1}`)!), png);
      assert.equal(firstFrameOf(`fails ${k}`), sha256(png));
    }
  });

  it('two chains side by side within max_in_flight: both finish, the second never waits for the first', async () => {
    const dir = tempDir();
    const a = chainOf('left', 3);
    const b = chainOf('right', 3);
    const job = writeJob(dir, { name: 'chain-pair', baseUrls: e2e.sim.urls, items: [...a, ...b], maxInFlight: 2, polling: POLLS });
    const result = await run('chain-pair', { jobFile: job });
    assert.equal(result.counts.succeeded, 6);
    const created = e2e.sim.stats().createsByPrompt;
    for (const s of [...a, ...b]) assert.equal(created[s.prompt], 1);
  });
}
