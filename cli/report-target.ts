// Resolves `JOB.yaml or JOB-ID` to the job's plan and output, for report (cli/job-outcome.ts: by
// id, from the job's workflow and stored inputs, on any machine that reaches them).
import { openStorage } from '../storage';
import type { ManifestRow } from '../storage/manifest';
import { UsageError } from './errors';
import { lookUpJob } from './job-outcome';

export async function resolveReportTarget(target: string): Promise<{ job: string; outputDir: string; rows: ManifestRow[] }> {
  const { plan, outcome } = await lookUpJob(target);
  if (plan.output.storage !== 'local' || !plan.output.dir) {
    throw new UsageError(`${plan.job} writes to ${openStorage(plan.output).location}: report needs a local output directory`);
  }
  return { job: plan.job, outputDir: plan.output.dir, rows: outcome.rows };
}
