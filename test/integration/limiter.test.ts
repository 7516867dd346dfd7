// LimiterWorkflow (workflows/limiter.ts) on a real Temporal dev server: permits granted within the
// shared concurrency to every asker, a holder terminated while holding losing its permit at the end
// of its lease, continue-as-new carrying holders and asks, and the limiter's histories replaying
// through the current code. The holders are workflows that take a permit through the render's own
// code (SharedPermit); the ask's activity is the real one's signalWithStart without the key (a fixed
// limiter id). Not on the time-skipping server: it deadlocks when two workflows signal each other
// at the same moment (the limiter's grant stays "initiated", the worker's completion times out).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { permitHoldersRunning, type AskForPermitInput } from '../../activities/limiter';
import type { JobSettings, SharedLimits } from '../../jobfile/plan';
import type { LimiterInput } from '../../workflows/limiter';
import { startTestTemporal, type TestTemporal } from '../support/temporal';
import type { HoldInput, PermitHolderWorkflow } from './fixtures/permit-holder';
import { acceptKeylessJobsInThisWorker } from '../../activities/job-key-check';

// The jobs here are built by the test, with no starter's key fingerprint: this process carries them as a
// worker started with --accept-keyless-jobs does (docs/keys.md).
acceptKeylessJobsInThisWorker(true);

type Held = Awaited<ReturnType<typeof PermitHolderWorkflow>>;

function settingsWith(shared: Omit<SharedLimits, 'per'>): JobSettings {
  return { concurrency: { maxInFlight: 10, shared: { ...shared, per: 'key' } } } as JobSettings;
}

/** Most permits held at once, from each holder's [granted, released). */
function mostHeldAtOnce(held: Held[]): number {
  return Math.max(...held.map(({ grantedAt: t }) => held.filter((h) => h.grantedAt <= t && t < h.releasedAt).length));
}

describe('the shared limits workflow', () => {
  let temporal: TestTemporal;
  let bundle: { code: string };
  let client: Client;
  let connection: NativeConnection;

  before(async () => {
    [temporal, bundle] = await Promise.all([
      startTestTemporal(),
      bundleWorkflowCode({ workflowsPath: join(__dirname, 'fixtures', 'permit-holder.ts'), logger: new DefaultLogger('WARN') }),
    ]);
    client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
    connection = await NativeConnection.connect({ address: temporal.address });
  });
  after(async () => {
    await connection?.close();
    await client?.connection.close();
    await temporal?.stop();
  });

  /** Runs `body` with a worker for the holders and the limiter `limiterId` (started by the first ask with `limiter`). */
  async function withWorker<T>(limiterId: string, limiter: LimiterInput, body: (taskQueue: string) => Promise<T>): Promise<T> {
    const taskQueue = `limiter-${limiterId}`;
    const worker = await Worker.create({
      connection,
      taskQueue,
      workflowBundle: bundle,
      activities: {
        async askForPermit(input: AskForPermitInput) {
          await Context.current().client.workflow.signalWithStart('LimiterWorkflow', {
            workflowId: limiterId,
            taskQueue,
            args: [limiter],
            signal: 'askPermit',
            signalArgs: [input.request],
          });
          return { limiterId };
        },
        permitHoldersRunning,
      },
      shutdownGraceTime: '1s',
    });
    return worker.runUntil(body(taskQueue));
  }

  function startHolder(taskQueue: string, name: string, input: HoldInput) {
    return client.workflow.start<typeof PermitHolderWorkflow>('PermitHolderWorkflow', { taskQueue, workflowId: name, args: [input] });
  }

  /** Until the limiter's grant has reached this holder. */
  async function untilGranted(holder: WorkflowHandle) {
    for (let granted = false; !granted; await new Promise((r) => setTimeout(r, 100))) {
      const { events } = await holder.fetchHistory();
      granted = !!events?.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'permitGranted');
    }
  }

  /** The limiter's runs, newest first, through the runs each continued from. */
  async function limiterHistories(limiterId: string) {
    const histories = [];
    let runId: string | undefined = (await client.workflow.getHandle(limiterId).describe()).runId;
    while (runId) {
      const history = await client.workflow.getHandle(limiterId, runId).fetchHistory();
      histories.push(history);
      runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    }
    return histories;
  }

  it('grants at most max_in_flight permits at once to all askers, continues as new, and replays', { timeout: 120_000 }, async () => {
    const limiterId = 'reelflow-limit/in-flight';
    const held = await withWorker(limiterId, { historyBudget: 40 }, async (taskQueue) => {
      const settings = settingsWith({ maxInFlight: 2 });
      const handles = await Promise.all(
        Array.from({ length: 8 }, (_, i) => startHolder(taskQueue, `holder-${i + 1}`, { settings, holdMs: 1_000 })),
      );
      return Promise.all(handles.map((h) => h.result()));
    });
    assert.equal(mostHeldAtOnce(held), 2);
    // Eight holds of 1 s, two at a time: at least 4 s from the first grant to the last release.
    const span = Math.max(...held.map((h) => h.releasedAt)) - Math.min(...held.map((h) => h.grantedAt));
    assert.ok(span >= 4_000, `${span} ms`);

    const histories = await limiterHistories(limiterId);
    assert.ok(histories.length >= 2, `the limiter ran ${histories.length} run(s): it did not continue as new`);
    const replayed = Worker.runReplayHistories(
      { workflowBundle: bundle },
      histories.map((history) => ({ workflowId: limiterId, history })),
    );
    let count = 0;
    for await (const result of replayed) {
      assert.equal(result.error, undefined, String(result.error));
      count++;
    }
    assert.equal(count, histories.length);
  });

  it('frees the permit of a holder whose workflow was terminated within the lease', { timeout: 120_000 }, async () => {
    const limiterId = 'reelflow-limit/lease';
    const leaseMs = 3_000;
    const { held, terminatedAt } = await withWorker(limiterId, { leaseMs }, async (taskQueue) => {
      const settings = settingsWith({ maxInFlight: 1 });
      const first = await startHolder(taskQueue, 'holder-terminated', { settings, holdMs: 60 * 60_000 });
      await untilGranted(first);
      const second = await startHolder(taskQueue, 'holder-waiting', { settings, holdMs: 100 });
      await new Promise((r) => setTimeout(r, 500));
      await first.terminate('test: a holder that never gives its permit back');
      const at = Date.now();
      return { held: await second.result(), terminatedAt: at };
    });
    assert.ok(held.grantedAt >= terminatedAt, 'the waiting holder was granted only after the first lost its permit');
    // Its lease began before the termination: the check at its end (and a second's slack for the check) frees it.
    assert.ok(held.grantedAt - terminatedAt <= leaseMs + 1_000, `granted ${held.grantedAt - terminatedAt} ms after the termination`);
  });

  it('a holder canceled while it waits does not hold up the next asker', { timeout: 120_000 }, async () => {
    const limiterId = 'reelflow-limit/withdraw';
    const result = await withWorker(limiterId, {}, async (taskQueue) => {
      const settings = settingsWith({ maxInFlight: 1 });
      const first = await startHolder(taskQueue, 'holder-long', { settings, holdMs: 3_000 });
      await untilGranted(first);
      const canceled = await startHolder(taskQueue, 'holder-canceled', { settings, holdMs: 60 * 60_000 });
      const third = await startHolder(taskQueue, 'holder-third', { settings, holdMs: 100 });
      await new Promise((r) => setTimeout(r, 1_000));
      await canceled.cancel();
      const [a, c] = await Promise.all([first.result(), third.result()]);
      return {
        first: a,
        third: c,
        canceled: await canceled.result().then(
          () => 'completed',
          (e: unknown) => String(e),
        ),
      };
    });
    assert.match(result.canceled, /cancel/i);
    assert.ok(result.third.grantedAt >= result.first.releasedAt);
    // Not after a lease: nothing waited for a check of the canceled holder.
    assert.ok(result.third.grantedAt - result.first.releasedAt < 2_000, JSON.stringify(result));
  });
});
