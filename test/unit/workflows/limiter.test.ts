// LimiterWorkflow (workflows/limiter.ts) on Temporal's time-skipping server: leases of a minute and
// a limiter's continue-as-new pass in milliseconds. The asks and releases come from the test's
// client, and the holders only receive grants: two workflows that signal each other at the same
// moment deadlock this server (test/integration/limiter.test.ts has the holders that ask themselves,
// on a real server).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, before, beforeEach, describe, it } from 'node:test';
import { WorkflowNotFoundError } from '@temporalio/client';
import { DefaultLogger, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { permitHoldersRunning, type PermitRequest } from '../../../activities/limiter';
import { LimiterWorkflow, askPermitSignal, releasePermitSignal } from '../../../workflows/limiter';
import { startTimeSkippingTemporal, type TimeSkippingTemporal } from '../../support/time-skipping';
import type { GrantRecorderWorkflow } from '../../integration/fixtures/permit-holder';

/**
 * A signal to the limiter's current run. CI once saw the time-skipping test server answer
 * "Completed workflow" to one: with a history budget of 25 the limiter continues as new every few
 * permits, and a signal that arrives as a run closes can be refused. Sent again, it reaches the
 * new run; anything else is thrown.
 */
async function signalCurrentRun(send: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError) || attempt >= 5) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const TASK_QUEUE = 'unit-limiter';
const LIMITER_ID = 'reelflow-limit/unit';
const LEASE_MS = 60_000;

describe('the shared limits workflow, on skipped time', () => {
  let bundle: { code: string };
  let env: TimeSkippingTemporal;

  before(async () => {
    bundle = await bundleWorkflowCode({
      workflowsPath: join(__dirname, '..', '..', 'integration', 'fixtures', 'permit-holder.ts'),
      logger: new DefaultLogger('WARN'),
    });
  });
  beforeEach(async () => {
    env = await startTimeSkippingTemporal();
  });
  afterEach(() => env.stop());

  it(
    'frees a permit whose holder ended without giving it back at the end of its lease, across continue-as-new, and replays',
    { timeout: 180_000 },
    async () => {
      const worker = await Worker.create({
        connection: env.connection,
        taskQueue: TASK_QUEUE,
        workflowBundle: bundle,
        activities: { permitHoldersRunning },
        shutdownGraceTime: '1s',
      });
      const grants = await worker.runUntil(async () => {
        await env.workflows.start(LimiterWorkflow, { taskQueue: TASK_QUEUE, workflowId: LIMITER_ID, args: [{ historyBudget: 25 }] });
        // Its current run, whichever it has continued to.
        const limiter = env.workflows.getHandle(LIMITER_ID);
        const times: number[] = [];
        // Five holders, one permit: each ends as soon as it is granted, without releasing; the first
        // two give theirs back by signal (the release a render sends), the others lose it at their lease's end.
        const holders = await Promise.all(
          Array.from({ length: 5 }, (_, i) =>
            env.workflows.start<typeof GrantRecorderWorkflow>('GrantRecorderWorkflow', {
              taskQueue: TASK_QUEUE,
              workflowId: `holder-${i + 1}`,
            }),
          ),
        );
        const requests: PermitRequest[] = holders.map((h) => ({
          workflowId: h.workflowId,
          runId: h.firstExecutionRunId,
          limits: { maxInFlight: 1 },
        }));
        for (const request of requests) await signalCurrentRun(() => limiter.signal(askPermitSignal, request));
        for (const [i, holder] of holders.entries()) {
          if (i < 2) {
            // Waited for without skipping time (awaiting its result would let the lease end first), then released.
            while ((await holder.describe()).status.name !== 'COMPLETED') await new Promise((r) => setTimeout(r, 100));
            await signalCurrentRun(() => limiter.signal(releasePermitSignal, requests[i]!));
          }
          times.push(await holder.result());
        }
        return times;
      });
      // Released by signal: the next grant at once. Lost: the next at the end of the lease.
      assert.ok(grants[1]! - grants[0]! < LEASE_MS / 2, JSON.stringify(grants));
      assert.ok(grants[2]! - grants[1]! < LEASE_MS / 2, JSON.stringify(grants));
      for (const i of [3, 4]) {
        const gap = grants[i]! - grants[i - 1]!;
        assert.ok(gap >= LEASE_MS && gap <= 2 * LEASE_MS, `grant ${i + 1} came ${gap} ms after the one before`);
      }

      const histories = [];
      let runId: string | undefined = (await env.workflows.getHandle(LIMITER_ID).describe()).runId;
      while (runId) {
        const history = await env.workflows.getHandle(LIMITER_ID, runId).fetchHistory();
        histories.push(history);
        runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
      }
      assert.ok(histories.length >= 2, `the limiter ran ${histories.length} run(s): it did not continue as new`);
      let replayed = 0;
      for await (const result of Worker.runReplayHistories(
        { workflowBundle: bundle },
        histories.map((history) => ({ workflowId: LIMITER_ID, history })),
      )) {
        assert.equal(result.error, undefined, String(result.error));
        replayed++;
      }
      assert.equal(replayed, histories.length);
    },
  );
});
