// `run` claims the job's output location before anything starts (storage/owner.ts): a location
// another job owns is refused with exit 2, naming both jobs and the location (docs/reruns.md).
import type { Plan } from '../jobfile/plan';
import { openStorage } from '../storage';
import { OutputOwnedError, claimOutput } from '../storage/owner';
import { StorageError } from '../storage/storage';
import { jobWorkflowId } from '../workflows/ids';
import { InfrastructureError, UsageError } from './errors';

export async function claimOutputOrExplain(plan: Plan): Promise<void> {
  try {
    await claimOutput(openStorage(plan.output), { job: plan.job, workflowId: jobWorkflowId(plan.job) });
  } catch (error) {
    if (error instanceof OutputOwnedError) throw new UsageError(error.message);
    if (error instanceof StorageError) throw new InfrastructureError(error.message);
    throw error;
  }
}
