// Starting, following and steering a job through its workflow definitions: the job's progress
// query, its items' status queries, the cancel signal, its result, its item workflows, the list of
// recent jobs. The CLI prints what these return.
import { CancelledFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import { endedCount } from '../domain/end-states';
import { renderWorkflowIdPrefix } from '../workflows/ids';
import { JobWorkflow, cancelSignal, progressQuery } from '../workflows/job';
import { itemStatusQuery, type RenderWorkflow } from '../workflows/render';
import type { JobInput, JobProgress, JobResult, RenderStatus } from '../workflows/types';
import { JobFailedError } from './errors';
import { jobHandle } from './jobs';
import { isCompleted, isRunning, stateName } from './status';

/**
 * Starts the job's workflow, or attaches to it when it runs (one workflow id per job,
 * workflows/ids.ts): a second start of a running job is the same job.
 */
export function startOrAttach(client: Client, workflowId: string, taskQueue: string, input: JobInput) {
  return client.workflow.start(JobWorkflow, {
    taskQueue,
    workflowId,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  });
}

/**
 * The job's progress as its workflow answers it, its ETA as of now (liveEta); undefined when no
 * worker answers within `waitMs`.
 */
export async function jobProgress(client: Client, workflowId: string, waitMs?: number): Promise<JobProgress | undefined> {
  const ask = () => jobHandle(client, workflowId).query(progressQuery);
  const progress = await (waitMs === undefined ? ask() : client.withDeadline(Date.now() + waitMs, ask)).catch(() => undefined);
  return progress && liveEta(progress, Date.now());
}

/**
 * A workflow's clock stands still between its tasks, a query's answer included: its ETA is as of
 * the last item that ended, and would stand still too. The finish it implies (the workflow's
 * elapsed time then, plus its ETA) is counted down to `now` instead; once past it, no ETA is
 * better than a wrong one, until the next item ends.
 */
export function liveEta(progress: JobProgress, now: number): JobProgress {
  const { etaMs, counts, total, startedAt } = progress;
  if (etaMs === undefined) return progress;
  const done = endedCount(counts);
  const remaining = total - done - counts.skipped;
  if (done <= 0 || remaining <= 0) return progress;
  // The workflow computed etaMs = elapsed / done x remaining: its elapsed time then follows.
  const finishAt = startedAt + (etaMs * done) / remaining + etaMs;
  const { etaMs: _stale, ...rest } = progress;
  return finishAt > now ? { ...rest, etaMs: Math.round(finishAt - now) } : rest;
}

/** How long the display waits for an item's status before it draws without it. */
const ITEM_STATUS_WAIT_MS = 1_000;

/** The status of up to `limit` of the items in flight, as their workflows answer (those that do). */
export async function itemStatuses(
  client: Client,
  progress: JobProgress,
  limit: number,
  waitMs = ITEM_STATUS_WAIT_MS,
): Promise<RenderStatus[]> {
  const shown = progress.inFlight.slice(0, limit);
  // An item whose workflow has not run its first task yet answers only once it has: the display
  // shows the job's counts meanwhile, not nothing (instead of an empty progress area for the 15-20 s a plan can take).
  const answers = await Promise.allSettled(
    shown.map((i) =>
      client.withDeadline(Date.now() + waitMs, () => client.workflow.getHandle<typeof RenderWorkflow>(i.workflowId).query(itemStatusQuery)),
    ),
  );
  return answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
}

/** True once the job's workflow has ended; false while it runs, or when Temporal does not answer now. */
export function jobEnded(client: Client, workflowId: string): Promise<boolean> {
  return jobHandle(client, workflowId)
    .describe()
    .then(
      (d) => !isRunning(d),
      () => false,
    );
}

/** The job's result: waits for its end. */
/** The job's result once it ends; a job whose workflow failed is JobFailedError, saying why. */
export async function jobResult(client: Client, workflowId: string): Promise<JobResult> {
  try {
    return await jobHandle(client, workflowId).result();
  } catch (error) {
    throw error instanceof WorkflowFailedError ? new JobFailedError(workflowId, error) : error;
  }
}

/**
 * The job's result, or for a job canceled through Temporal itself (its web UI, `temporal workflow
 * cancel`), which returns none, what its record says: canceled, when it started and closed. Its
 * items' outcomes are in the manifest as for any job.
 */
export async function jobResultOrCancellation(client: Client, workflowId: string, job: string): Promise<JobResult> {
  try {
    return await jobHandle(client, workflowId).result();
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    if (!(error.cause instanceof CancelledFailure)) throw new JobFailedError(workflowId, error);
    const described = await jobHandle(client, workflowId).describe();
    const counts = { succeeded: 0, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 };
    const finishedAt = described.closeTime?.getTime() ?? Date.now();
    return { job, total: 0, counts, startedAt: described.startTime.getTime(), finishedAt, notStarted: 0, canceled: true };
  }
}

/**
 * Asks a running job to stop: no new creations, in-flight items end as canceled. Returns the
 * state of a job that is not running instead (nothing to cancel).
 */
export async function requestCancel(
  client: Client,
  workflowId: string,
): Promise<{ requested: true } | { requested: false; state: string }> {
  const handle = jobHandle(client, workflowId);
  const described = await handle.describe();
  if (!isRunning(described)) return { requested: false, state: stateName(described) };
  await handle.signal(cancelSignal);
  return { requested: true };
}

/** The task queue the job's workflow runs on; `fallback` when it cannot be described. */
export function jobTaskQueue(client: Client, workflowId: string, fallback: string): Promise<string> {
  return jobHandle(client, workflowId)
    .describe()
    .then(
      (d) => d.taskQueue,
      () => fallback,
    );
}

/** How many of the job's item workflows are still open (visibility; 0 when Temporal does not answer). */
export async function openItemWorkflows(client: Client, jobWorkflowId: string): Promise<number> {
  const query = `WorkflowId STARTS_WITH '${renderWorkflowIdPrefix(jobWorkflowId)}' AND ExecutionStatus = 'Running'`;
  return (await client.workflow.count(query).catch(() => ({ count: 0 }))).count;
}

/** One run of a job in the list of recent jobs, newest first; `result` when it completed. */
export interface JobRun {
  workflowId: string;
  state: string;
  startTime: Date;
  closeTime?: Date;
  result?: JobResult;
}

/** Not the runs a job continued as new from: one row per job run. */
const JOBS_QUERY = `WorkflowType = '${JobWorkflow.name}' AND ExecutionStatus != 'ContinuedAsNew'`;

/** The newest `limit` job runs, and how many there are in all. */
export async function recentJobs(client: Client, limit: number): Promise<{ runs: JobRun[]; total: number }> {
  const total = (await client.workflow.count(JOBS_QUERY)).count;
  const runs: JobRun[] = [];
  for await (const w of client.workflow.list({ query: JOBS_QUERY })) {
    if (runs.length >= limit) break;
    const run: JobRun = {
      workflowId: w.workflowId,
      state: stateName(w),
      startTime: w.startTime,
      ...(w.closeTime ? { closeTime: w.closeTime } : {}),
    };
    // A completed workflow's result says how the job ended: canceled, stopped by a cause, items that failed.
    if (isCompleted(w)) {
      const result = await client.workflow
        .getHandle<typeof JobWorkflow>(w.workflowId, w.runId, { followRuns: false })
        .result()
        .catch(() => undefined);
      if (result) run.result = result;
    }
    runs.push(run);
  }
  return { runs, total };
}
