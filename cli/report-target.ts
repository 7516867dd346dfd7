// Resolves `JOB.yaml or JOB-ID` to the job's plan and output, for results and report.
import type { Plan } from '../jobfile/plan';
import { openStorage } from '../storage';
import type { ManifestRow } from '../storage/manifest';
import { UsageError } from './errors';
import { loadPlanOrExplain, looksLikeFile, resolveJob } from './job-ref';
import { openSession } from './session';
import { readOutcome } from './summary';

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

export async function resolveReportTarget(target: string): Promise<{ job: string; outputDir: string; rows: ManifestRow[] }> {
  const plan = await planFor(target);
  if (plan.output.storage !== 'local' || !plan.output.dir) {
    throw new UsageError(`${plan.job} writes to ${openStorage(plan.output).location}: report needs a local output directory`);
  }
  const outcome = await readOutcome(plan);
  return { job: plan.job, outputDir: plan.output.dir, rows: outcome.rows };
}
