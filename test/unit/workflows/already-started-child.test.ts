// An item's workflow id is the same in every run of a job (workflows/ids.ts), so a run can find the
// id held by the item's workflow from an earlier run of the job. That workflow reports its outcome
// by signal to the job's workflow id: to the current run if it has not reported yet, but to the
// earlier run if it already has, which is the case when the earlier run's worker stopped between
// its report and its close. The next run then waited for ever for a report that had gone to the
// earlier run (CI once hung 600 s so in test/e2e/run.test.ts, on `run --retry-failed`).
//
// Each test makes that earlier run for real: a JobWorkflow on a task queue of its own, whose worker
// stops inside item A's workflow (while it renders, or as it records that the render failed), after
// which the earlier run is terminated (in CI it had completed; to the next run it is the same:
// closed). Item A's workflow stays open on that queue until a test runs a worker there again. The
// next run has a queue of its own, so it never runs the earlier workflow itself. (The stub plan
// gives the next run every item; the real one gives it item A only if its manifest row asks for a
// render, as a failed row does under --retry-failed.)
import assert from 'node:assert/strict';
import { afterEach, before, beforeEach, describe, it } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { itemWorkflowState, type HeldItemId, type ItemWorkflowState } from '../../../activities/item-workflow';
import type { JobSettings, PlanItem } from '../../../jobfile/plan';
import { jobWorkflowId, renderWorkflowId } from '../../../workflows/ids';
import { JobWorkflow } from '../../../workflows/job';
import type { JobInput, JobResult } from '../../../workflows/types';
import {
  bundleWorkflowsFromSource,
  planFor,
  startTimeSkippingTemporal,
  stubActivities,
  type StubOptions,
  type TimeSkippingTemporal,
} from '../../support/time-skipping';

const MINUTE = 60_000;
// Real-time renders and polls: once a child ends after the run that started it has closed, the test
// server stops skipping time (test/support/time-skipping.ts), and every test here ends one so.
const polling = { initialMs: 250, maxMs: 500, timeoutMs: 10 * MINUTE };
const stubOptions: StubOptions = { renderMs: 1_000 };
/** The old code waits for ever; far longer than any of these jobs needs on a loaded machine. */
const JOB_DEADLINE_MS = 60_000;

type Plan = { settings: JobSettings; items: PlanItem[] };
type Stubs = ReturnType<typeof stubActivities>['stubs'];

describe('JobWorkflow, when an item workflow from an earlier run holds the item id', () => {
  let bundle: { code: string };
  let env: TimeSkippingTemporal;
  const stopLater: Array<() => Promise<void>> = [];
  before(async () => {
    bundle = await bundleWorkflowsFromSource();
  });
  beforeEach(async () => {
    env = await startTimeSkippingTemporal();
  });
  afterEach(async () => {
    for (const stop of stopLater.splice(0)) await stop();
    await env.stop();
  });

  /** A worker on the earlier run's queue again (item A's workflow goes on there), until the test ends. */
  async function resumeEarlierQueue(name: string, plan: Plan): Promise<{ creates: Map<string, number> }> {
    const { stubs, creates } = stubActivities(env, plan, stubOptions);
    const worker = await Worker.create({
      connection: env.connection,
      taskQueue: earlierQueue(name),
      workflowBundle: bundle,
      activities: stubs,
      shutdownGraceTime: '1s',
    });
    const running = worker.run();
    stopLater.push(async () => {
      worker.shutdown();
      await running;
    });
    return { creates };
  }

  /**
   * The earlier run of job `name`: its worker stops inside item A's workflow, either at its first
   * status check (A has not reported) or as it records that A's render failed (A reports to the
   * earlier run and does not close). Returns A's workflow once the earlier run is closed.
   */
  async function earlierRun(name: string, plan: Plan, stopAt: 'rendering' | 'reported'): Promise<WorkflowHandle> {
    const itemA = plan.items[0]!;
    const childId = renderWorkflowId(jobWorkflowId(name), itemA.key);
    const { stubs } = stubActivities(env, { ...plan, items: [itemA] }, stubOptions);
    const stopping: { worker?: Worker } = {};
    if (stopAt === 'rendering') {
      const check = stubs.checkTask;
      stubs.checkTask = (input) => {
        stopping.worker?.shutdown();
        return check(input);
      };
    } else {
      stubs.checkTask = async () => ({ state: 'failed', failReason: 'the gateway failed it', baseUrl: 'http://127.0.0.1:9' });
      const record = stubs.recordItem;
      stubs.recordItem = (input) => {
        stopping.worker?.shutdown();
        return record(input);
      };
    }
    const worker = (stopping.worker = await Worker.create({
      connection: env.connection,
      taskQueue: earlierQueue(name),
      workflowBundle: bundle,
      activities: stubs,
      shutdownGraceTime: '1s',
      // No sticky queue: item A's next workflow task waits on the earlier queue itself, for whichever
      // worker serves it next (the test server holds tasks of a stopped worker's sticky queue).
      maxCachedWorkflows: 0,
    }));
    const running = worker.run();
    const job = await env.workflows.start(JobWorkflow, {
      taskQueue: earlierQueue(name),
      workflowId: jobWorkflowId(name),
      args: [{ jobFile: `${name}.yaml` }],
    });
    await running;
    const child = env.workflows.getHandle(childId);
    if (stopAt === 'reported') await until(async () => reportDelivered(child));
    await job.terminate('test: the earlier run is over');
    const { runId, status } = await child.describe();
    assert.equal(status.name, 'RUNNING', "item A's workflow outlives the earlier run");
    // Pinned to its run: the next run may start a new workflow under the same id.
    return env.workflows.getHandle(childId, runId);
  }

  /**
   * The next run of the job, on its own queue, to its end or JOB_DEADLINE_MS; its history then
   * replays through the same code (the new path is deterministic, its patch marker included).
   */
  async function nextRun(name: string, stubs: Stubs, input: Omit<JobInput, 'jobFile'> = {}): Promise<JobResult> {
    const worker = await Worker.create({
      connection: env.connection,
      taskQueue: `${name}-next`,
      workflowBundle: bundle,
      activities: stubs,
      shutdownGraceTime: '1s',
    });
    return worker.runUntil(async () => {
      const handle = await env.workflows.start(JobWorkflow, {
        taskQueue: `${name}-next`,
        workflowId: jobWorkflowId(name),
        args: [{ jobFile: `${name}.yaml`, ...input }],
      });
      const deadline = setTimeout(() => void handle.terminate('test: deadline').catch(() => undefined), JOB_DEADLINE_MS);
      let result: JobResult;
      try {
        result = await handle.result();
      } catch (error) {
        throw new Error(`the next run did not finish in ${JOB_DEADLINE_MS / 1000} s (${(error as Error).message})`);
      } finally {
        clearTimeout(deadline);
      }
      await Worker.runReplayHistory({ workflowBundle: bundle, replayName: name }, await handle.fetchHistory(), handle.workflowId);
      return result;
    });
  }

  /** The real activity, with `around` run before it (once) and what it answered kept. */
  function askingWith(stubs: Stubs, around: () => Promise<void> = async () => undefined): ItemWorkflowState[] {
    const answers: ItemWorkflowState[] = [];
    let ran: Promise<void> | undefined;
    stubs.itemWorkflowState = async (question: HeldItemId) => {
      await (ran ??= around());
      const answer = await itemWorkflowState(question);
      answers.push(answer);
      return answer;
    };
    return answers;
  }

  it('renders an item again (--retry-failed) whose workflow reported to the earlier run and stays open, closing that one', async () => {
    const name = 'open-reported';
    const plan = await planFor(name, ['item A', 'item B'], { concurrency: { maxInFlight: 1 }, polling });
    const earlier = await earlierRun(name, plan, 'reported');
    const { stubs, creates } = stubActivities(env, plan, stubOptions);
    const answers = askingWith(stubs);

    const result = await nextRun(name, stubs, { retryStates: ['failed'] });

    assert.deepEqual(result.counts, { succeeded: 2, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 });
    assert.deepEqual(Object.fromEntries(creates), { 'item A': 1, 'item B': 1 });
    // No worker serves the earlier queue: not closed within the activity's few seconds, so closed by it.
    assert.deepEqual(answers, [{ state: 'finished', reported: true, status: 'TERMINATED', closedHere: true }]);
    assert.equal((await earlier.describe()).status.name, 'TERMINATED');
  });

  it('renders an item again whose workflow reported to the earlier run once that one closes by itself', async () => {
    const name = 'closes-by-itself';
    const plan = await planFor(name, ['item A', 'item B'], { concurrency: { maxInFlight: 1 }, polling });
    const earlier = await earlierRun(name, plan, 'reported');
    const { stubs, creates } = stubActivities(env, plan, stubOptions);
    // A worker comes back to the earlier queue as the next run asks: item A's workflow closes then.
    let earlierCreates: Map<string, number> | undefined;
    const answers = askingWith(stubs, async () => {
      earlierCreates = (await resumeEarlierQueue(name, plan)).creates;
    });

    const result = await nextRun(name, stubs, { retryStates: ['failed'] });

    assert.deepEqual(result.counts, { succeeded: 2, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 });
    assert.deepEqual(Object.fromEntries(creates), { 'item A': 1, 'item B': 1 });
    assert.equal(earlierCreates?.size, 0, 'the earlier workflow only closed');
    assert.deepEqual(answers, [{ state: 'finished', reported: true, status: 'COMPLETED', closedHere: false }]);
    assert.equal((await earlier.describe()).status.name, 'COMPLETED');
  });

  it('waits for an item workflow that has not reported yet: it reports to the next run, which counts it once', async () => {
    const name = 'reports-later';
    const plan = await planFor(name, ['item A', 'item B'], { concurrency: { maxInFlight: 1 }, polling });
    await earlierRun(name, plan, 'rendering');
    const { stubs, creates } = stubActivities(env, plan, stubOptions);
    // Only once the next run has asked does the earlier item workflow go on (and report).
    const answers: ItemWorkflowState[] = [];
    stubs.itemWorkflowState = async (question) => {
      const answer = await itemWorkflowState(question);
      answers.push(answer);
      await resumeEarlierQueue(name, plan);
      return answer;
    };

    const result = await nextRun(name, stubs);

    assert.deepEqual(
      answers.map((a) => a.state),
      ['running'],
    );
    assert.deepEqual(result.counts, { succeeded: 2, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 });
    assert.deepEqual(Object.fromEntries(creates), { 'item B': 1 });
  });

  it('counts once an item whose workflow reported to this very run before the run asked about it', async () => {
    const name = 'reported-here';
    const plan = await planFor(name, ['item A', 'item B'], { concurrency: { maxInFlight: 1 }, polling });
    const earlier = await earlierRun(name, plan, 'rendering');
    const { stubs, creates } = stubActivities(env, plan, stubOptions);
    const answers = askingWith(stubs, async () => {
      await resumeEarlierQueue(name, plan);
      await closed(earlier);
    });

    const result = await nextRun(name, stubs);

    assert.deepEqual(answers, [{ state: 'finished', reported: true, status: 'COMPLETED', closedHere: false }]);
    assert.deepEqual(result.counts, { succeeded: 2, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 }, 'item A counted once');
    assert.deepEqual(Object.fromEntries(creates), { 'item B': 1 }, 'its report came here: item A is not created again');
  });

  it('does not start an item again whose earlier workflow reported to this run before the item came up', async () => {
    const name = 'reported-first';
    // Item A is the earlier run's only item; the next run renders item X first, one at a time.
    const plan = await planFor(name, ['item A', 'item X'], { concurrency: { maxInFlight: 1 }, polling });
    const [itemA, itemX] = plan.items as [PlanItem, PlanItem];
    const earlier = await earlierRun(name, plan, 'rendering');
    const next = {
      ...plan,
      items: [
        { ...itemX, index: 1 },
        { ...itemA, index: 2 },
      ],
    };
    const { stubs, creates } = stubActivities(env, next, {
      ...stubOptions,
      // While item X renders, item A's earlier workflow goes on and reports, to this run.
      beforeCreate: async (prompt) => {
        if (prompt !== 'item X') return;
        await resumeEarlierQueue(name, plan);
        await closed(earlier);
      },
    });
    const answers = askingWith(stubs);

    const result = await nextRun(name, stubs);

    assert.deepEqual(result.counts, { succeeded: 2, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 });
    assert.deepEqual(Object.fromEntries(creates), { 'item X': 1 }, 'item A is not created again');
    assert.equal(answers.length, 0, 'nothing to ask: its outcome is here');
  });

  it('renders an item again whose earlier workflow was terminated before it reported', async () => {
    const name = 'terminated';
    const plan = await planFor(name, ['item A', 'item B'], { concurrency: { maxInFlight: 1 }, polling });
    const earlier = await earlierRun(name, plan, 'rendering');
    const { stubs, creates } = stubActivities(env, plan, stubOptions);
    const answers = askingWith(stubs, async () => {
      await earlier.terminate('an operator stopped it');
    });

    const result = await nextRun(name, stubs);

    assert.deepEqual(result.counts, { succeeded: 2, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 });
    assert.deepEqual(Object.fromEntries(creates), { 'item A': 1, 'item B': 1 });
    assert.deepEqual(answers, [{ state: 'finished', reported: false, status: 'TERMINATED', closedHere: false }]);
  });
});

function earlierQueue(name: string): string {
  return `${name}-earlier`;
}

/** Until the workflow has closed (polled: awaiting its result on this server would let time skip). */
async function closed(handle: WorkflowHandle): Promise<void> {
  await until(async () => (await handle.describe()).status.name !== 'RUNNING');
}

/** Whether the workflow's report (its one signal) has reached the job. */
async function reportDelivered(handle: WorkflowHandle): Promise<boolean> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).some((e) => e.externalWorkflowExecutionSignaledEventAttributes);
}

async function until(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not so after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
