// A six-shot chain survives kill -9 of its worker and of the Temporal server (docs/chains.md): run
// on, the chain finishes and every shot is created once. The worker is a child process with the
// chain's plan pages (test/support/chain-worker.ts); the server is killed with SIGKILL and started
// again on its SQLite file.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ensureDevServer, recordedServer } from '../../worker/dev-server';
import { connectClient } from '../../worker/temporal';
import { jobWorkflowId } from '../../workflows/ids';
import { JobWorkflow } from '../../workflows/job';
import { chainOf } from '../support/chain-activities';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';
import { until } from '../support/wait';

const KEY = 'sk-test-chain-durability-0123';
const QUEUE = 'chain-durability';
const POLLS = 'polling:\n  initial: 200ms\n  max: 400ms\n  timeout: 5m';

function startWorker(env: NodeJS.ProcessEnv): { child: ChildProcess; ready: Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'support', 'chain-worker.ts')], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the chain worker exited (${code}) before it was ready`)));
  });
  return { child, ready };
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('a chain across kill -9', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [1500, 2500], seed: 7 });

  it('kill -9 of the worker and of the Temporal server mid-chain: the chain finishes, every shot created once', async () => {
    const dir = tempDir();
    const { shots, needs } = chainOf('durable', 6);
    const job = writeJob(dir, { name: 'chain-durable', baseUrls: e2e.sim.urls, items: shots, maxInFlight: 3, polling: POLLS });
    const env = {
      ...process.env,
      GATEWAY_API_KEY: KEY,
      TEMPORAL_ADDRESS: e2e.temporal.address,
      REELFLOW_TEST_QUEUE: QUEUE,
      REELFLOW_TEST_CHAIN: JSON.stringify(needs),
    };
    const created = (k: number) => e2e.sim.stats().createsByPrompt[`durable ${k}`] ?? 0;
    let worker = startWorker(env);
    const target = {
      address: e2e.temporal.address,
      namespace: 'default',
      connectionOptions: { address: e2e.temporal.address },
      description: 'test',
    };
    const client = await connectClient(target);
    try {
      await worker.ready;
      const handle = await client.workflow.start(JobWorkflow, {
        taskQueue: QUEUE,
        workflowId: jobWorkflowId('chain-durable'),
        args: [{ jobFile: job, runDate: '2026-11-28' }],
      });
      // Shot 2 is rendering (created, its render takes 1.5-2.5 s): the worker dies.
      await until(() => created(2) === 1, 90_000, 'shot 2 created');
      await killed(worker.child);
      worker = startWorker(env);
      await worker.ready;
      // Shot 4 is rendering: the server dies, and comes back on its own file.
      await until(() => created(4) === 1, 120_000, 'shot 4 created');
      process.kill(recordedServer(e2e.temporal.stateDir)!.pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 1000));
      e2e.temporal.server = await ensureDevServer({ stateDir: e2e.temporal.stateDir, foreground: true, startTimeoutMs: 90_000 });
      const result = await handle.result();
      assert.equal(result.counts.succeeded, 6, JSON.stringify(result));
      assert.deepEqual(
        shots.map((_, i) => created(i + 1)),
        [1, 1, 1, 1, 1, 1],
      );
      // Each dependent's create carried a first frame (the previous shot's, as chains.test.ts checks byte for byte).
      const content = e2e.sim.stats().contentByPrompt;
      for (let k = 2; k <= 6; k++) assert.equal(content[`durable ${k}`]?.[0]?.[0]?.role, 'first_frame', `shot ${k}`);
    } finally {
      await killed(worker.child);
      await client.connection.close();
    }
  });
});
