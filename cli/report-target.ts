// Resolves `JOB.yaml or JOB-ID` to the job's plan and output, for results and report.
import type { Plan } from '../jobfile/plan';
import { openStorage } from '../storage';
import type { ManifestRow } from '../storage/manifest';
import { WorkflowNotFoundError } from '@temporalio/client';
import { jobWorkflowId } from '../workflows/ids';
import { NeverRunError, UsageError } from './errors';
import { loadPlanOrExplain, looksLikeFile, resolveJob } from './job-ref';
import { openSession } from './session';
import { readOutcome, type JobOutcome } from './summary';
import { currentPicks, readPicks, type Pick } from '../storage/picks';
import { estimatePlan } from './estimate';
import { spendOf, type JobSpend } from './spend';

export async function planFor(target: string): Promise<Plan> {
  // A job file without a schedule names its outputs by itself; only ids and scheduled runs need Temporal.
  if (looksLikeFile(target)) {
    const plan = await loadPlanOrExplain(target);
    if (!plan.schedule) return plan;
  }
  const session = await openSession();
  try {
    const job = await resolveJob(session.client, target);
    return await loadPlanOrExplain(job.jobFile, job.runDate);
  } finally {
    await session.close();
  }
}

/**
 * The job's outcome, or NeverRunError when it was never run: no item has a row and Temporal knows
 * no workflow of it (a job whose items are all still in flight has none either, and is shown).
 */
export async function outcomeOfRunJob(plan: Plan, target: string): Promise<JobOutcome> {
  const outcome = await readOutcome(plan);
  if (outcome.rows.length > 0 || plan.schedule) return outcome;
  const session = await openSession();
  try {
    const workflowId = jobWorkflowId(plan.job);
    await session.client.workflow
      .getHandle(workflowId)
      .describe()
      .catch((error: unknown) => {
        if (error instanceof WorkflowNotFoundError) throw new NeverRunError(plan.job, target);
        throw error;
      });
  } finally {
    await session.close();
  }
  return outcome;
}

export interface ReportTarget {
  job: string;
  outputDir: string;
  rows: ManifestRow[];
  /** The standing picks made in `reelflow review` (docs/review.md). */
  picks: Map<string, Pick>;
  spend?: JobSpend;
}

export async function resolveReportTarget(target: string): Promise<ReportTarget> {
  const plan = await planFor(target);
  if (plan.output.storage !== 'local' || !plan.output.dir) {
    throw new UsageError(`${plan.job} writes to ${openStorage(plan.output).location}: report needs a local output directory`);
  }
  const outcome = await outcomeOfRunJob(plan, target);
  const picks = currentPicks(await readPicks(openStorage(plan.output)));
  const spend = spendOf(outcome.rows, estimatePlan(plan));
  return { job: plan.job, outputDir: plan.output.dir, rows: outcome.rows, picks, ...(spend ? { spend } : {}) };
}
