// What this process's own worker may do, as its user said on the command line (`run`, `worker`):
// where the key may go (docs/keys.md), whether it takes jobs without a key fingerprint, and what jobs
// may read outside their folders (docs/security.md). Set before the worker takes its first task.
import { allowKeysInThisWorker } from '../activities/context';
import { acceptKeylessJobsInThisWorker } from '../activities/job-key-check';
import { allowReadsInThisWorker } from '../activities/worker-read-scope';
import type { KeyAllowance } from '../jobfile/key-rule';

export interface WorkerRules {
  allowKeys: readonly KeyAllowance[];
  /** Only `worker` says; `run`'s worker keeps the default (it takes only its own job). */
  acceptKeylessJobs?: boolean;
  allowRead: readonly string[];
}

export function ruleThisWorker(rules: WorkerRules): void {
  allowKeysInThisWorker(rules.allowKeys);
  if (rules.acceptKeylessJobs !== undefined) acceptKeylessJobsInThisWorker(rules.acceptKeylessJobs);
  allowReadsInThisWorker(rules.allowRead);
}
