// Starting a job, once for `run`, `schedule` and any later UI: the checks before anything starts,
// the job's input, the task queue that carries it, the refusal of another starter's key, start or
// attach, and following the job to its end. The commands only parse their options and print.
import type { Client } from '@temporalio/client';
import { isKeyOf } from '../activities/key-fingerprint';
import { rememberCatalog } from '../activities/preflight';
import { judgeCatalog, modelUses, readCatalogs, verdictMessage } from '../gateway';
import type { Plan } from '../jobfile/plan';
import { readNotifySettings, undefinedTargets } from '../jobfile/notify-settings';
import type { RedoTake } from '../jobfile/takes';
import { openStorage } from '../storage';
import type { InputsRef } from '../storage/inputs';
import type { ItemEndState } from '../storage/manifest';
import { StorageError } from '../storage/storage';
import { firstRunIdOf } from '../worker/owned-job';
import { jobWorkflowId } from '../workflows/ids';
import type { JobInput, JobProgress } from '../workflows/types';
import { jobEnded, jobProgress, openItemWorkflows, startOrAttach } from './control';
import { spawnDetachedWorker } from './detached-worker';
import { InfrastructureError, UsageError } from './errors';
import { startedAs } from './job-identity';
import { refuseAnotherJobUnderName, runningExecution, startedJobInput } from './jobs';
import { fingerprintedJob, starterKeyFingerprint } from './keys';
import { isRunTaskQueue, newRunTaskQueue, TASK_QUEUE } from './task-queue';

/**
 * Before anything is stored or started: the key, the output, and the gateway once (docs/preflight.md):
 * some base address must answer (else exit 3, naming every address), and where the gateway publishes
 * a catalog every model the job uses must be in it (else exit 2, naming the model and its line).
 */
export async function preflight(plan: Plan, withWorker: boolean): Promise<void> {
  const key = process.env[plan.gateway.apiKeyEnv];
  if (withWorker && !key) {
    throw new UsageError(
      `the environment variable ${plan.gateway.apiKeyEnv} is not set: export your gateway key in it ` +
        '(gateway.api_key_env in the job file names the variable)',
    );
  }
  try {
    await openStorage(plan.output).checkWritable();
  } catch (error) {
    if (error instanceof StorageError) throw new InfrastructureError(error.message);
    throw error;
  }
  const report = await readCatalogs(plan.gateway.baseUrls, { key });
  const verdict = judgeCatalog(report, modelUses(plan), plan.gateway.apiKeyEnv);
  if (verdict.exit === 3) throw new InfrastructureError(verdictMessage(verdict));
  if (verdict.exit === 2) throw new UsageError(verdictMessage(verdict));
  if (key) rememberCatalog(plan, report); // the worker of this process checks nothing twice
}

/** What every start of the job carries: its stored inputs and the reads its user allowed. */
export interface StartInputs {
  inputs?: InputsRef;
  /** The user's decision, never the job file's: its workers read outside the folder only there. */
  allowRead: readonly string[];
}

/** What a run started now adds; a schedule's runs carry none of it and date themselves. */
export interface RunChoices {
  retryStates: ItemEndState[];
  budgetUsd?: number;
  redo?: RedoTake[];
  /** Names of the user's notify.yaml targets, already checked. */
  notify: readonly string[];
}

/**
 * The job's input. With the starter's key set, the job is carried only by workers holding the same
 * key (docs/keys.md). Without `run`, no runDate: each scheduled run dates its outputs itself.
 */
export function jobInput(plan: Plan, start: StartInputs, run?: RunChoices): JobInput {
  const fingerprint = starterKeyFingerprint(plan, jobWorkflowId(plan.job), start.inputs?.index);
  const { allowRead, inputs } = start;
  return {
    jobFile: plan.jobFile,
    ...(run ? { runDate: plan.runDate, retryStates: run.retryStates } : {}),
    ...(inputs ? { inputs } : {}),
    ...(fingerprint ? { keyFingerprint: fingerprint } : {}),
    ...(run?.budgetUsd !== undefined ? { budgetUsd: run.budgetUsd } : {}),
    ...(run?.redo ? { redo: run.redo } : {}),
    ...(allowRead.length > 0 ? { allowRead: [...allowRead] } : {}),
    ...(run
      ? {
          // Names only: the worker resolves each in its notify.yaml; no address or secret enters history.
          ...(run.notify.length > 0 ? { notify: [...run.notify] } : {}),
          // The prices this run priced the job with, the gateway's included: the workers' budget holds to
          // them. Even none: the job's worker then does not ask the gateway again (activities/plan.ts).
          prices: plan.pricing ?? {},
          startedAs: startedAs(plan),
        }
      : {}),
  };
}

/** `run --notify` names: each must be a target of the user's notify.yaml. */
export function checkedNotifyTargets(names: string[]): string[] {
  const problem = undefinedTargets(names, readNotifySettings());
  if (problem) throw new UsageError(`--notify: ${problem}`);
  return [...new Set(names)];
}

/** A schedule's action: every run on the shared queue, under the job's one workflow id. */
export function scheduledJobAction(plan: Plan, start: StartInputs): { taskQueue: string; workflowId: string; input: JobInput } {
  return { taskQueue: TASK_QUEUE, workflowId: jobWorkflowId(plan.job), input: jobInput(plan, start) };
}

/**
 * The queue of this run's worker: a new one of its own for a job it starts; the job's own when it
 * attaches to a job another run started (one that was interrupted, say) with the same key; none
 * when the job is on the shared queue (a fleet's workers carry it).
 */
export async function queueForThisRunsWorker(
  client: Client,
  workflowId: string,
  plan: Plan,
  note: (line: string) => void,
): Promise<string | undefined> {
  const running = await runningExecution(client, workflowId);
  if (!running) return newRunTaskQueue();
  await refuseAnotherJobUnderName(client, workflowId, plan);
  await refuseAnotherStartersJob(client, workflowId, plan);
  if (isRunTaskQueue(running.taskQueue)) return running.taskQueue;
  note(
    `${plan.job} runs on the shared task queue "${running.taskQueue}" (started with --no-worker or by a schedule): ` +
      'the workers of that queue (`reelflow worker`) carry it; this run follows its progress without a worker',
  );
  return undefined;
}

/**
 * The queue a run starts its job on: its own worker's; a new one of its own when its background
 * worker carries the job (run --detach); else the shared queue, for a fleet's workers.
 */
export function startQueue(ownWorkerQueue: string | undefined, backgroundWorker: boolean): string {
  return ownWorkerQueue ?? (backgroundWorker ? newRunTaskQueue() : TASK_QUEUE);
}

/** A running job started with another key is not this environment's to work on (docs/keys.md). */
export async function refuseAnotherStartersJob(client: Client, workflowId: string, plan: Plan): Promise<void> {
  const started = await startedJobInput(client, workflowId).catch(() => undefined);
  const fingerprint = started?.keyFingerprint;
  const key = process.env[plan.gateway.apiKeyEnv];
  if (fingerprint === undefined || (key && isKeyOf(fingerprint, key, fingerprintedJob(plan, workflowId, started?.inputs?.index)))) return;
  throw new UsageError(
    `${plan.job} is running, started with another ${plan.gateway.apiKeyEnv} than this environment's: a worker here would ` +
      'spend this key on it, so this run does not attach. Follow it with `reelflow status`, resume it from the environment ' +
      'that started it, or cancel it (`reelflow cancel`) and run it again with this key',
  );
}

/** Starts the job or attaches to the running one: the id of its first run, which its worker is bound to. */
export async function startOrAttachJob(client: Client, workflowId: string, taskQueue: string, input: JobInput): Promise<string> {
  const handle = await startOrAttach(client, workflowId, taskQueue, input);
  return firstRunIdOf(client, workflowId, handle.firstExecutionRunId);
}

/** --detach with the embedded server: a worker in the background finishes the job, then exits. */
export function spawnBackgroundWorker(
  workflowId: string,
  allowKey: readonly string[],
  allowRead: readonly string[],
  callbacks: string[],
): void {
  spawnDetachedWorker(workflowId, 'job', [
    '--until-done',
    workflowId,
    ...allowKey.flatMap((spec) => ['--allow-key', spec]),
    ...allowRead.flatMap((dir) => ['--allow-read', dir]),
    ...callbacks,
  ]);
}

export interface Following {
  /** Runs one round's Temporal calls, so that a stop cancels those in flight. */
  round<T>(fn: () => Promise<T>): Promise<T>;
  /** What the job has done so far, once a round; a failure to show it is the display's own. */
  onProgress(progress: JobProgress): Promise<void>;
  stopped(): boolean;
  whenStopped: Promise<void>;
  /** Between rounds. */
  intervalMs: number;
}

/**
 * Follows the job until it ends or the follower stops: one round each interval asks whether it
 * ended and, while it runs, its progress. A round that fails is tried again the next interval.
 */
export async function followUntilEnded(client: Client, workflowId: string, following: Following): Promise<void> {
  while (!following.stopped()) {
    const ended = await following
      .round(async () => {
        if (await jobEnded(client, workflowId)) return true;
        const progress = await jobProgress(client, workflowId);
        if (progress && !following.stopped()) await following.onProgress(progress).catch(() => undefined);
        return false;
      })
      .catch(() => false);
    if (ended) return;
    await Promise.race([following.whenStopped, new Promise((r) => setTimeout(r, following.intervalMs))]);
  }
}

/**
 * An item's workflow reports its outcome to the job and closes in a later workflow task. The worker
 * of this process sees that task through before it stops. A courtesy: the job copes with an item
 * workflow that reported and did not close (JobWorkflow's freeHeldId); this only avoids leaving
 * such workflows open.
 */
export async function childrenClosed(client: Client, jobWorkflowId: string, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    if ((await openItemWorkflows(client, jobWorkflowId)) === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}
