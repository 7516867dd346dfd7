// JobWorkflow: the sliding window (Temporal's batch-sliding-window sample is the model). It keeps
// max_in_flight RenderWorkflow children running; children are abandoned and report back by signal
// to this workflow's id, so continue-as-new loses none of them.
import {
  ParentClosePolicy, allHandlersFinished, condition, continueAsNew, defineQuery, defineSignal,
  getExternalWorkflowHandle, setHandler, sleep, startChild, workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { FailureType, JOB_FATAL_FAILURES } from '../activities/failure-types';
import { bookkeeping } from './activities';
import { renderWorkflowId } from './ids';
import { RenderWorkflow, itemDoneSignal } from './render';
import type { PlanItem } from '../jobfile/plan';
import type { ItemOutcome, JobCarry, JobInput, JobProgress, JobResult, StateCounts } from './types';

export const progressQuery = defineQuery<JobProgress>('progress');
export const cancelSignal = defineSignal<[string?]>('cancel');

const PAGE_SIZE = 100;
/** Default bound on events per run, well under Temporal's 50k and the 10k this project allows. */
const HISTORY_BUDGET = 8_000;
const MEDIAN_WINDOW = 25;

function emptyCounts(): StateCounts {
  return { succeeded: 0, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 };
}

function median(values: number[] | undefined): number | undefined {
  if (!values || values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export async function JobWorkflow(input: JobInput): Promise<JobResult> {
  const self = workflowInfo();
  const carry: JobCarry = input.carry ?? {
    prepared: await bookkeeping.preparePlan({ jobFile: input.jobFile, runDate: input.runDate, startedAt: Date.now() }),
    cursor: 0, counts: emptyCounts(), inFlight: {}, renderSamples: {}, recentFailures: [],
    startedAt: Date.now(), lastCreateAt: 0, canceled: false, runs: 1,
  };
  const { prepared } = carry;
  const historyBudget = input.historyBudget ?? HISTORY_BUDGET;
  const { settings } = prepared;
  /** Outcomes that arrived before their startChild call returned (a child can finish that fast). */
  const early = new Map<string, ItemOutcome>();
  let state: JobProgress['state'] = 'running';

  const settle = (workflowId: string, outcome: ItemOutcome) => {
    delete carry.inFlight[workflowId];
    carry.counts[outcome.state] += 1;
    if (outcome.renderMs !== undefined) {
      const samples = (carry.renderSamples[outcome.model] ??= []);
      samples.push(outcome.renderMs);
      if (samples.length > MEDIAN_WINDOW) samples.shift();
    }
    if (outcome.state !== 'succeeded') {
      carry.recentFailures.push(outcome);
      if (carry.recentFailures.length > 20) carry.recentFailures.shift();
      if (outcome.error && JOB_FATAL_FAILURES.has(outcome.error.kind) && !carry.fatal) carry.fatal = outcome.error.message;
    }
  };

  setHandler(itemDoneSignal, (outcome) => {
    const id = renderWorkflowId(self.workflowId, outcome.key);
    if (carry.inFlight[id]) settle(id, outcome);
    else early.set(id, outcome);
  });
  setHandler(cancelSignal, () => {
    carry.canceled = true;
  });
  setHandler(progressQuery, (): JobProgress => {
    const done = carry.counts.succeeded + carry.counts.failed + carry.counts.timed_out + carry.counts.canceled + carry.counts.unknown;
    const inFlight = Object.entries(carry.inFlight).map(([workflowId, v]) => ({ workflowId, ...v }));
    const elapsed = Date.now() - carry.startedAt;
    const remaining = prepared.itemCount - done - carry.counts.skipped;
    return {
      job: settings.job, state: carry.canceled && state === 'running' ? 'canceling' : state, total: prepared.itemCount,
      started: carry.cursor, runs: carry.runs, fatal: carry.fatal, startedAt: carry.startedAt,
      counts: { ...carry.counts, in_flight: inFlight.length, pending: Math.max(0, prepared.itemCount - carry.cursor) },
      inFlight, recentFailures: carry.recentFailures,
      etaMs: done > 0 && remaining > 0 ? Math.round((elapsed / done) * remaining) : undefined,
    };
  });

  /** Starts one item's RenderWorkflow; a child already running under its id will report to us anyway. */
  const startRender = async (item: PlanItem): Promise<void> => {
    const childId = renderWorkflowId(self.workflowId, item.key);
    try {
      await startChild(RenderWorkflow, {
        workflowId: childId,
        args: [{ jobWorkflowId: self.workflowId, item, settings, medianRenderMs: median(carry.renderSamples[item.request.model]) }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return;
      settle(childId, { key: item.key, index: item.index, model: item.request.model, state: 'failed',
        error: { kind: FailureType.startFailed, message: `could not start the item's workflow: ${(error as Error).message}` } });
      return;
    }
    const earlyOutcome = early.get(childId);
    if (earlyOutcome) { early.delete(childId); settle(childId, earlyOutcome); }
  };

  const canceledInFlight = new Set<string>();
  const stopping = () => carry.canceled || carry.fatal !== undefined;
  let page: Awaited<ReturnType<typeof bookkeeping.readPlanItems>> | undefined;
  let pageAt = 0;

  while (!stopping() && carry.cursor < prepared.itemCount) {
    if (page && pageAt >= page.items.length) {
      // Whatever this page did not return was already done: count it as skipped.
      carry.counts.skipped += page.nextOffset - carry.cursor;
      carry.cursor = page.nextOffset;
      page = undefined;
      continue;
    }
    if (!page) {
      page = await bookkeeping.readPlanItems({
        jobFile: input.jobFile, runDate: prepared.runDate, digest: prepared.digest, offset: carry.cursor,
        limit: PAGE_SIZE, retryStates: input.retryStates ?? [], output: settings.output,
      });
      pageAt = 0;
      continue;
    }
    await condition(() => stopping() || Object.keys(carry.inFlight).length < settings.concurrency.maxInFlight);
    if (stopping()) break;
    const cpm = settings.concurrency.createsPerMinute;
    if (cpm) {
      // creates_per_minute: children create right after they start, so pace the starts.
      const wait = carry.lastCreateAt + 60_000 / cpm - Date.now();
      if (wait > 0) await sleep(wait);
      carry.lastCreateAt = Date.now();
    }
    // Fill every free slot in this one workflow task: the starts go out together, so a window of
    // 100 fills in one or two server round trips instead of one round trip per child.
    const free = cpm ? 1 : settings.concurrency.maxInFlight - Object.keys(carry.inFlight).length;
    const batch = page.items.slice(pageAt, pageAt + free);
    pageAt += batch.length;
    for (const item of batch) {
      // Items between the cursor and this one were filtered out of the page as already done.
      carry.counts.skipped += item.index - 1 - carry.cursor;
      carry.cursor = item.index;
      carry.inFlight[renderWorkflowId(self.workflowId, item.key)] = { key: item.key, index: item.index, model: item.request.model };
    }
    await Promise.all(batch.map((item) => startRender(item)));

    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > historyBudget) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof JobWorkflow>({ ...input, carry: { ...carry, runs: carry.runs + 1 } });
    }
  }

  // Stop early: cancel in-flight children; they record `canceled` and report back.
  const cancelInFlight = async () => {
    for (const id of Object.keys(carry.inFlight)) {
      if (canceledInFlight.has(id)) continue;
      canceledInFlight.add(id);
      await getExternalWorkflowHandle(id).cancel().catch(() => undefined);
    }
  };
  // Wait for the window to drain; long waits continue as new too, so history stays bounded.
  while (Object.keys(carry.inFlight).length > 0) {
    if (stopping()) {
      state = carry.canceled ? 'canceling' : 'stopping';
      await cancelInFlight();
    }
    await condition(() => Object.keys(carry.inFlight).length === 0 || workflowInfo().historyLength > historyBudget
      || (stopping() && Object.keys(carry.inFlight).some((id) => !canceledInFlight.has(id))));
    if (Object.keys(carry.inFlight).length > 0 && workflowInfo().historyLength > historyBudget) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof JobWorkflow>({ ...input, carry: { ...carry, runs: carry.runs + 1 } });
    }
  }
  state = 'completed';
  await condition(allHandlersFinished);
  return {
    job: settings.job, total: prepared.itemCount, counts: carry.counts, startedAt: carry.startedAt,
    finishedAt: Date.now(), fatal: carry.fatal, canceled: carry.canceled,
  };
}
