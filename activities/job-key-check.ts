// Whether this worker may spend its key on a job (docs/keys.md), after the key rule has said where
// the key may go: the job must carry a fingerprint of this very key made for this very job, or,
// when it carries none (its submitter held no key), this worker's user must have opted in to such
// jobs (`reelflow worker --accept-keyless-jobs`). A fingerprint is checked against what the worker
// itself knows of the job: the workflow the activity runs for (the server's record, which no job
// input can change) and the job file, stored inputs and gateway the activity is about to use.
import { Context } from '@temporalio/activity';
import type { JobSettings } from '../jobfile/plan';
import type { InputsRef } from '../storage/inputs/refs';
import { fingerprintRefusal, jobIdOfWorkflow } from './key-fingerprint';

/** A job's settings as the workers hold them, with what its fingerprint is bound to. */
export type FingerprintedSettings = JobSettings & { keyFingerprint?: string; inputs?: InputsRef; jobFile?: string };

let keylessJobsAccepted = false;

/** `reelflow worker --accept-keyless-jobs`: this worker's key carries jobs started without a key. */
export function acceptKeylessJobsInThisWorker(accept: boolean): void {
  keylessJobsAccepted = accept;
}

/** The workflow the current activity runs for, from the server's record (undefined outside an activity). */
export function activityWorkflowId(): string | undefined {
  try {
    return Context.current().info.workflowExecution?.workflowId;
  } catch {
    return undefined;
  }
}

/**
 * Why this worker must not spend `apiKey` (its `apiKeyEnv`) on the job of `settings`, run by the
 * workflow `workflowId`; undefined when it may.
 */
export function keyUseRefusal(settings: FingerprintedSettings, apiKey: string, workflowId: string | undefined): string | undefined {
  const { apiKeyEnv, baseUrls } = settings.gateway;
  if (settings.keyFingerprint === undefined) {
    if (keylessJobsAccepted) return undefined;
    return (
      `the job was started without a key fingerprint (its submitter's environment held no ${apiKeyEnv}), and this worker ` +
      'spends its key on such a job only when its user opted in: start the worker with --accept-keyless-jobs if it carries ' +
      `keyless submissions (a CI job, a schedule), or start the job from an environment that holds this worker's ${apiKeyEnv} (docs/keys.md)`
    );
  }
  const job = {
    workflowId: jobIdOfWorkflow(workflowId ?? `reelflow-${settings.job}`),
    jobFile: settings.jobFile ?? '',
    ...(settings.inputs ? { inputsIndex: settings.inputs.index } : {}),
    apiKeyEnv,
    baseUrls,
  };
  const refusal = fingerprintRefusal(settings.keyFingerprint, apiKey, job);
  if (refusal === 'unbound') {
    return (
      `the job's key fingerprint is of the form older reelflow versions made, which is not bound to its job (a copy of it ` +
      'would open this worker for any job): cancel the job and run it again with this version (`reelflow cancel`, then `reelflow run`)'
    );
  }
  if (refusal === 'mismatch') {
    return (
      `this worker's ${apiKeyEnv} is not the key the job was started with, or its key fingerprint was made for another job ` +
      `(another workflow id, job file or gateway than ${job.workflowId}'s): it does not spend its key on someone else's job. ` +
      `Run the job's workers with the key of whoever started it (a fleet shares one key), or start the job from an ` +
      `environment that holds this worker's key (docs/keys.md)`
    );
  }
  return undefined;
}
