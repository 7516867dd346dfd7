// How a job went, in one answer for every command (status, results, report, cancel, run): each
// item's latest manifest row (client/summary.ts readOutcome) is the truth of the items; the job's
// workflow adds only what the rows cannot say: whether it runs, and how it stopped (canceled, a
// job-wide cause, items left not started).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { jobResult } from './control';
import { NeverRunError } from './errors';
import { jobHandle, loadJobPlan, loadPlanOrExplain, looksLikeFile, pricedAsStarted, resolveJob, type JobRef, type LoadedJob } from './jobs';
import { isCompleted, stateName } from './status';
import type { Plan } from '../jobfile/plan';
import { jobWorkflowId } from '../workflows/ids';
import type { JobResult } from '../workflows/types';
import { openSession } from './session';
import { readOutcome, type JobOutcome } from './summary';

export interface JobStanding {
  workflowId: string;
  plan: Plan;
  /**
   * The workflow's state (`running`, `completed`, `failed`, `terminated`, …); `forgotten` when
   * Temporal no longer holds it; absent when not asked (a job file whose rows answer by themselves).
   */
  state?: string;
  outcome: JobOutcome;
  /** How its workflow ended, once it completed. */
  result?: JobResult;
}

/**
 * The job's standing. A job Temporal never ran and with no row is NeverRunError (`target` is what
 * the user named); one whose workflow Temporal no longer holds (its retention passed) is told by its rows.
 */
export async function jobStanding(
  client: Client,
  ref: JobRef,
  loaded: LoadedJob,
  target: string,
): Promise<JobStanding & { state: string }> {
  const { plan } = loaded;
  const described = await jobHandle(client, ref.workflowId)
    .describe()
    .catch((error: unknown) => {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    });
  const result = described && isCompleted(described) ? await jobResult(client, ref.workflowId).catch(() => undefined) : undefined;
  // The last run's start tells its part of the spend apart (client/spend.ts spendSince), as its summary did.
  const outcome = await readOutcome(plan, loaded.referenceDigests, result?.startedAt);
  if (!described) {
    if (outcome.rows.length === 0) throw new NeverRunError(plan.job, target);
    return { workflowId: ref.workflowId, plan, state: 'forgotten', outcome };
  }
  return { workflowId: ref.workflowId, plan, state: stateName(described), outcome, ...(result ? { result } : {}) };
}

/**
 * A target's job as results and report see it. A job file without a schedule is read where it
 * is, and needs Temporal only to tell a job never run from one whose items are all in flight; an
 * id or a scheduled job is looked up in Temporal, its plan read as its workflow runs it
 * (client/jobs.ts: from its stored inputs when it has them).
 */
export async function lookUpJob(target: string): Promise<JobStanding> {
  if (looksLikeFile(target)) {
    // Priced as its run priced it (docs/costs.md): the prices recorded beside its manifest.
    const plan = await pricedAsStarted(await loadPlanOrExplain(target));
    if (!plan.schedule) {
      const outcome = await readOutcome(plan);
      if (outcome.rows.length > 0) return { workflowId: jobWorkflowId(plan.job), plan, outcome };
    }
  }
  const session = await openSession();
  try {
    const ref = await resolveJob(session.client, target);
    if (ref.note) process.stderr.write(`${ref.note}\n`);
    return await jobStanding(session.client, ref, await loadJobPlan(ref), target);
  } finally {
    await session.close();
  }
}
