// The activities of the shared limits (docs/limits.md): asking the limiter workflow of the job's
// gateway key for a permit, and the limiter's check of its holders. The limiter is a workflow
// (workflows/limiter.ts), so every job and every worker of the fleet asks the same one; these
// activities are how a render reaches it (a workflow cannot signalWithStart) and how it learns
// that a holder's workflow is gone without releasing (terminated, timed out).
import { Context, log } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { JobSettings, SharedLimits } from '../jobfile/plan';
import { workerKeyFor } from './context';
import { stableKeyFingerprint } from './key-fingerprint';

/**
 * The queue every limiter workflow runs on, whichever queue its askers' jobs are on: `run`'s own
 * worker polls a queue of its own (client/task-queue.ts), and a limiter there would stop with that run.
 * Every worker process that asks for a permit polls it too (hostLimitersWith), so a limiter has a
 * worker as long as anyone asks it. Its tasks need no key.
 */
export const LIMITER_TASK_QUEUE = `${process.env.REELFLOW_TASK_QUEUE ?? 'reelflow'}-limiters`;
/** Names the limiter workflow registers (workflows/limiter.ts): an activity may import no workflow code. */
const LIMITER_WORKFLOW_TYPE = 'LimiterWorkflow';
const ASK_PERMIT_SIGNAL = 'askPermit';

export interface PermitHolderRef {
  workflowId: string;
  runId: string;
}

/** What a render asks with: its workflow run (where the grant goes) and its job's shared limits. */
export interface PermitRequest extends PermitHolderRef {
  limits: Pick<SharedLimits, 'maxInFlight' | 'createsPerMinute'>;
}

export interface AskForPermitInput {
  settings: JobSettings & { keyFingerprint?: string };
  /** The item's model: the limiter's when the job shares per model. */
  model: string;
  request: PermitRequest;
}

let startHere: (() => Promise<void>) | undefined;

/** The worker's way to poll LIMITER_TASK_QUEUE in this process, started the first time a permit is asked here. */
export function hostLimitersWith(start: (() => Promise<void>) | undefined): void {
  startHere = start;
}

/**
 * The limiter's workflow id for the job's key (and model): the same for every job that names the
 * same base addresses with the same key, on any worker. The key enters only as a fingerprint of
 * it (activities/key-fingerprint.ts); the worker's own key is the job's (checked by workerKeyFor).
 */
export function limiterWorkflowId(settings: AskForPermitInput['settings'], model: string): string {
  const key = workerKeyFor(settings);
  const gateway = [...settings.gateway.baseUrls].sort().join('\n');
  const id = `reelflow-limit/${stableKeyFingerprint(key, `reelflow shared limit\n${gateway}`)}`;
  return settings.concurrency.shared?.per === 'model' ? `${id}/${model}` : id;
}

/**
 * Asks the limiter for a permit, starting it if none runs (signalWithStart). Asking again with the
 * same run is harmless: the limiter keeps one request per run. The grant comes by signal.
 */
export async function askForPermit(input: AskForPermitInput): Promise<{ limiterId: string }> {
  const limiterId = limiterWorkflowId(input.settings, input.model);
  await startHere?.().catch((error: unknown) => {
    // Another worker of the fleet may poll the limiters' queue; the render asks again later.
    log.warn('could not poll the limiters task queue in this worker', { reason: (error as Error | undefined)?.message });
  });
  await Context.current().client.workflow.signalWithStart(LIMITER_WORKFLOW_TYPE, {
    workflowId: limiterId,
    taskQueue: LIMITER_TASK_QUEUE,
    args: [{}],
    signal: ASK_PERMIT_SIGNAL,
    signalArgs: [input.request],
  });
  return { limiterId };
}

/** Of these permit holders, the runs that are still running (the others can hold no permit). */
export async function permitHoldersRunning(input: { holders: PermitHolderRef[] }): Promise<string[]> {
  const { client } = Context.current();
  const running: string[] = [];
  for (const holder of input.holders) {
    try {
      const { status } = await client.workflow.getHandle(holder.workflowId, holder.runId).describe();
      if (status.name === 'RUNNING') running.push(holder.runId);
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }
  return running;
}
