// JobWorkflow leaves manifest.jsonl at the output location once, at its very end, however it ends:
// every item done, canceled, after continue-as-new; and a snapshot that fails does not fail the job.
// On the time-skipping test server with stub activities.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { cancelSignal } from '../../../workflows/job';
import { planFor, runJob, timeSkippingPerTest, stubActivities } from '../../support/time-skipping';

const MINUTE = 60_000;
const polling = { initialMs: MINUTE, maxMs: 5 * MINUTE, timeoutMs: 10 * 60 * MINUTE };

/** The stubs with snapshotManifest recording, for each call, its output and how many rows were recorded before it. */
function withSnapshotRecorder(stubs: ReturnType<typeof stubActivities>, fail = false) {
  const calls: { output: unknown; rowsBefore: number }[] = [];
  const activities = {
    ...stubs.stubs,
    async snapshotManifest(input: { output: unknown }) {
      calls.push({ output: input.output, rowsBefore: stubs.events.filter((e) => e.kind === 'record').length });
      if (fail) throw ApplicationFailure.nonRetryable('the bucket is gone', 'storage');
      return { location: 'stub/manifest.jsonl', items: 0 };
    },
  };
  return { activities, calls };
}

describe('JobWorkflow leaves manifest.jsonl when it ends', () => {
  const server = timeSkippingPerTest();

  it('once, after every item has its row, for the job output', async () => {
    const plan = await planFor('snap-done', ['a', 'b', 'c'], { concurrency: { maxInFlight: 2 }, polling });
    const { activities, calls } = withSnapshotRecorder(stubActivities(server.env, plan, { renderMs: 5 * MINUTE }));
    const result = await runJob(server.env, server.bundle, activities, 'snap-done');
    assert.equal(result.counts.succeeded, 3);
    assert.deepEqual(calls, [{ output: plan.settings.output, rowsBefore: 3 }]);
  });

  it('when canceled, after the canceled items have their rows', { timeout: 60_000 }, async () => {
    const plan = await planFor('snap-canceled', ['x', 'y', 'z'], { concurrency: { maxInFlight: 2 }, polling });
    const stubs = stubActivities(server.env, plan, { renderMs: 60 * MINUTE });
    const { activities, calls } = withSnapshotRecorder(stubs);
    const result = await runJob(server.env, server.bundle, activities, 'snap-canceled', {}, async (handle) => {
      while (stubs.events.filter((e) => e.kind === 'create').length < 2) await new Promise((r) => setTimeout(r, 50));
      await handle.signal(cancelSignal, 'test');
    });
    assert.equal(result.canceled, true);
    assert.deepEqual(calls, [{ output: plan.settings.output, rowsBefore: 2 }]);
  });

  it('only in the last run after continue-as-new', async () => {
    const prompts = Array.from({ length: 12 }, (_, i) => `snap-continued ${i + 1}`);
    const plan = await planFor('snap-continued', prompts, {
      concurrency: { maxInFlight: 4 },
      polling: { initialMs: 250, maxMs: 500, timeoutMs: 10 * MINUTE },
    });
    const { activities, calls } = withSnapshotRecorder(stubActivities(server.env, plan, { renderMs: 1_000 }));
    let firstRunId = '';
    const result = await runJob(server.env, server.bundle, activities, 'snap-continued', { historyBudget: 40 }, async (handle) => {
      firstRunId = handle.firstExecutionRunId;
    });
    assert.equal(result.counts.succeeded, 12);
    const first = await server.env.workflows.getHandle('reelflow-snap-continued', firstRunId).fetchHistory();
    assert.ok(first.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes, 'the job did continue as new');
    assert.deepEqual(calls, [{ output: plan.settings.output, rowsBefore: 12 }]);
  });

  it('a snapshot that fails does not fail the job', async () => {
    const plan = await planFor('snap-fails', ['p'], { polling });
    const { activities, calls } = withSnapshotRecorder(stubActivities(server.env, plan, { renderMs: MINUTE }), true);
    const result = await runJob(server.env, server.bundle, activities, 'snap-fails');
    assert.equal(result.counts.succeeded, 1);
    assert.equal(calls.length, 1);
  });
});
