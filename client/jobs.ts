// A job as a client finds it: `JOB.yaml or JOB-ID` to the job's workflow id, the input its run
// started with (decoded by the SDK's data converter), and its plan. By id, the plan comes from the
// workflow's own input: its stored inputs when it has them (docs/client.md), so any machine that
// reaches Temporal and the storage can look at any job, running or ended.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { storedJobFiles } from '../activities/inputs';
import { localReferenceDigests, type ReferenceDigests } from '../activities/reference-digests';
import { dateIn, formatJobFileError, loadJobFile, type UserPrices } from '../jobfile';
import type { FileAccess } from '../jobfile/context';
import type { Plan } from '../jobfile/plan';
import { describeInputLocation, type InputsRef } from '../storage/inputs/refs';
import { changedPaths, hashJobInputs, recordingFiles, type JobInputs } from '../storage/inputs/publish';
import { openInputStore, readInputIndex } from '../storage/inputs/store';
import { StorageError } from '../storage/objects/errors';
import { jobWorkflowId } from '../workflows/ids';
import { JobWorkflow } from '../workflows/job';
import { withPricesBeneath, type PriceTable } from '../jobfile/prices';
import { openStorage } from '../storage';
import { readJobPrices } from '../storage/records/job-prices';
import type { JobInput } from '../workflows/types';
import { InfrastructureError, UsageError } from './errors';
import { allowedReads } from './read-allowance';
import { anotherJobUnderName } from './job-identity';
import { isRunning } from './status';

/** A job a command acts on. */
export interface JobRef {
  workflowId: string;
  /** The job file's path on the machine that started the job (messages, and where a file target was read). */
  jobFile: string;
  /** `{date}` of the run looked at. */
  runDate?: string;
  /** Where the job's inputs were stored when it started: its plan is read from there, not from `jobFile`. */
  inputs?: InputsRef;
  /** The run's start (ms since the epoch), when its `{date}` is its start's date in the schedule's zone. */
  startedAt?: number;
  /** A job file target that changed since its running job started: what to tell the user. */
  note?: string;
  /** The prices the job was started with (JobInput.prices: the gateway's included); its estimates use them. */
  prices?: PriceTable;
  /** The folders outside its own its starter let it read (JobInput.allowRead): its plan is read with them. */
  allowRead?: string[];
}

/** A job's plan, and how its local references' contents are known (for "changed since rendered"). */
export interface LoadedJob {
  plan: Plan;
  referenceDigests: ReferenceDigests;
}

/**
 * Loads and validates a job file, or explains every problem at once (exit 2). `prices`: the user's
 * (`--prices`, settings). `allowRead`: the folders outside its own it may read (default: the user's
 * read settings; client/read-allowance.ts).
 */
export async function loadPlanOrExplain(
  jobFile: string,
  runDate?: string,
  files?: FileAccess,
  prices?: UserPrices,
  allowRead: readonly string[] = allowedReads(),
): Promise<Plan> {
  const path = resolve(jobFile);
  // Stored inputs answer for their own files (files.isFile); a path is read where it is.
  if (files ? !files.isFile(path) : !existsSync(path)) throw new UsageError(`${jobFile}: no such job file`);
  const result = await loadJobFile(path, { runDate, files, ...prices, allowRead });
  if (!result.ok) {
    const lines = result.errors.map((e) => formatJobFileError(e));
    throw new UsageError(
      `${jobFile} is not a valid job file (${result.errors.length} problem${result.errors.length === 1 ? '' : 's'}):\n${lines.join('\n')}`,
    );
  }
  return result.plan;
}

export function looksLikeFile(target: string): boolean {
  return /\.ya?ml$/i.test(target) || existsSync(target);
}

/** The job workflow's handle, typed by its definition. */
export function jobHandle(client: Client, workflowId: string) {
  return client.workflow.getHandle<typeof JobWorkflow>(workflowId);
}

/**
 * The job a target names: a job file's job (its newest scheduled run, for a scheduled job), or an
 * id (with or without the `reelflow-` prefix) read from Temporal. An unknown id is a UsageError.
 */
export async function resolveJob(client: Client | undefined, target: string): Promise<JobRef> {
  if (looksLikeFile(target)) {
    const reads = recordingFiles();
    const plan = await loadPlanOrExplain(target, undefined, reads);
    let workflowId = jobWorkflowId(plan.job);
    let runDate: string | undefined;
    if (client && plan.schedule) {
      const scheduled = await newestScheduledRun(client, workflowId, plan.schedule.timezone);
      if (scheduled) ({ workflowId, runDate } = scheduled);
    }
    // A name finds whichever job holds it: status, cancel and the others act only on this file's job.
    if (client && (await runningExecution(client, workflowId))) await refuseAnotherJobUnderName(client, workflowId, plan);
    const note = client ? await inputsChangedNote(client, workflowId, target, () => hashJobInputs(plan, reads.texts)) : undefined;
    return { workflowId, jobFile: plan.jobFile, ...(runDate ? { runDate } : {}), ...(note ? { note } : {}) };
  }
  if (!client) throw new UsageError(`${target}: not a job file`);
  const workflowId = target.startsWith('reelflow-') ? target : jobWorkflowId(target);
  let input: JobInput | undefined;
  let startTime: Date | undefined;
  try {
    input = await startedJobInput(client, workflowId);
    if (!input?.jobFile) throw new Error('no job input');
    if (input.runDate === undefined && input.carry?.prepared.runDate === undefined)
      startTime = (await jobHandle(client, workflowId).describe()).startTime;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError || /not found/i.test((error as Error).message)) {
      throw new UsageError(`no job with id ${workflowId}: check \`reelflow status\` for recent jobs, or pass the job file`);
    }
    throw error;
  }
  const runDate = input.runDate ?? input.carry?.prepared.runDate;
  return {
    workflowId,
    jobFile: input.jobFile,
    ...(runDate ? { runDate } : {}),
    ...(input.inputs ? { inputs: input.inputs } : {}),
    ...(input.prices ? { prices: input.prices } : {}),
    ...(input.allowRead ? { allowRead: input.allowRead } : {}),
    // A scheduled run dates itself by its start in the schedule's zone: known once its plan is read.
    ...(startTime ? { startedAt: startTime.getTime() } : {}),
  };
}

/**
 * The job's plan as its workflow runs it: from its stored inputs when it has them (verified
 * against their digest, cached under this user's cache), else from the job file at its path, which
 * only the starter's machine (or one sharing its files) has.
 */
export async function loadJobPlan(ref: JobRef): Promise<LoadedJob> {
  if (ref.inputs) {
    let stored;
    try {
      stored = await storedJobFiles(ref.inputs);
    } catch (error) {
      if (error instanceof StorageError) {
        throw new InfrastructureError(
          `${ref.workflowId}: its stored inputs (${describeInputLocation(ref.inputs.location)}): ${error.message}`,
        );
      }
      throw error;
    }
    const plan = await loadPlanOrExplain(stored.jobFile, ref.runDate, stored.files, undefined, ref.allowRead);
    const dated = await withScheduledDate(plan, ref, (runDate) =>
      loadPlanOrExplain(stored.jobFile, runDate, stored.files, undefined, ref.allowRead),
    );
    return { plan: await pricedAsStarted(dated, ref.prices), referenceDigests: async (path) => stored.sha256(path) };
  }
  if (!existsSync(ref.jobFile)) {
    throw new UsageError(
      `${ref.workflowId} reads its job file at ${ref.jobFile}, which is not on this machine, and its inputs were not stored ` +
        '(they are for S3 output, or with --inputs / REELFLOW_INPUTS): look from the machine that started it, or pass the job file',
    );
  }
  const plan = await loadPlanOrExplain(ref.jobFile, ref.runDate, undefined, undefined, ref.allowRead);
  const reload = (runDate: string) => loadPlanOrExplain(ref.jobFile, runDate, undefined, undefined, ref.allowRead);
  return {
    plan: await pricedAsStarted(await withScheduledDate(plan, ref, reload), ref.prices),
    referenceDigests: localReferenceDigests,
  };
}

/**
 * The plan priced as its job's runs priced it (docs/costs.md), so that status, results and the report
 * show the estimate the run showed, without asking the gateway: the prices a run looked up by id was
 * started with (`started`: its JobInput.prices), over those the job's runs recorded beside its
 * manifest (storage/records/job-prices.ts: by job file too, and with Temporal gone), over the job file's.
 */
export async function pricedAsStarted(plan: Plan, started?: PriceTable): Promise<Plan> {
  const recorded = await readJobPrices(openStorage(plan.output));
  if (!started && !recorded) return plan;
  return { ...plan, pricing: withPricesBeneath(started, withPricesBeneath(recorded, plan.pricing ?? {})) };
}

/** A scheduled run without a recorded date writes under its start's date in the schedule's zone. */
async function withScheduledDate(plan: Plan, ref: JobRef, reload: (runDate: string) => Promise<Plan>): Promise<Plan> {
  if (ref.runDate !== undefined || ref.startedAt === undefined || !plan.schedule) return plan;
  const runDate = dateIn(ref.startedAt, plan.schedule.timezone);
  return runDate === plan.runDate ? plan : reload(runDate);
}

/**
 * A scheduled run's id is the job's id plus its scheduled time, and it writes under that run's
 * `{date}`: the newest run, manual or scheduled, is the one a user asks about.
 */
async function newestScheduledRun(
  client: Client,
  workflowId: string,
  timeZone: string,
): Promise<{ workflowId: string; runDate: string } | undefined> {
  let newest: { workflowId: string; startTime: Date } | undefined;
  const query = `WorkflowType = '${JobWorkflow.name}' AND WorkflowId STARTS_WITH '${workflowId}'`;
  for await (const w of client.workflow.list({ query })) {
    if (!newest || w.startTime > newest.startTime) newest = { workflowId: w.workflowId, startTime: w.startTime };
  }
  if (!newest || newest.workflowId === workflowId) return undefined;
  return { workflowId: newest.workflowId, runDate: dateIn(newest.startTime.getTime(), timeZone) };
}

/** Refuses (exit 2) when the job running as `workflowId` is not the job of `plan` (client/job-identity.ts). */
export async function refuseAnotherJobUnderName(client: Client, workflowId: string, plan: Plan): Promise<void> {
  const running = await startedJobInput(client, workflowId).catch(() => undefined);
  if (!running) return;
  const refusal = anotherJobUnderName(workflowId, running, plan);
  if (refusal) throw refusal;
}

/** The input the job's current run started with (its first history event), or undefined. */
export async function startedJobInput(client: Client, workflowId: string): Promise<JobInput | undefined> {
  const history = await jobHandle(client, workflowId).fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
  if (!payloads?.length) return undefined;
  return decodeFromPayloadsAtIndex<JobInput>(client.options.loadedDataConverter, 0, payloads);
}

/**
 * When the job is running from stored inputs and the files now say something else, what to tell
 * the user: the job goes on with the version it started with, and how to run the new one. Jobs
 * that read their files at their paths notice an edit themselves (job_file_changed), as before.
 */
export async function inputsChangedNote(
  client: Client,
  workflowId: string,
  jobFile: string,
  current: () => Promise<JobInputs>,
): Promise<string | undefined> {
  const running = await runningExecution(client, workflowId);
  if (!running) return undefined;
  const started = await startedJobInput(client, workflowId).catch(() => undefined);
  if (!started?.inputs) return undefined;
  const now = await current();
  if (now.digest === started.inputs.index) return undefined;
  const where = describeInputLocation(started.inputs.location);
  // Which files changed, when the store that holds the started version can be read from here.
  const changed = await readInputIndex(openInputStore(started.inputs.location), started.inputs.index).then(
    (before) => changedPaths(before, now.files),
    () => [],
  );
  const which =
    changed.length > 0 ? ` (${changed.slice(0, 5).join(', ')}${changed.length > 5 ? `, and ${changed.length - 5} more` : ''})` : '';
  return (
    `note: ${jobFile} changed since job ${workflowId} started${which}: the running job goes on with the version ` +
    `stored when it started (${where}). To run the edited version: \`reelflow cancel ${workflowId}\`, then ` +
    `\`reelflow run ${jobFile}\` (or run it again once the job has ended)`
  );
}

/** The job workflow's description while it runs; undefined when it has ended, or never ran. */
export function runningExecution(client: Client, workflowId: string): Promise<WorkflowExecutionDescription | undefined> {
  return jobHandle(client, workflowId)
    .describe()
    .then(
      (d) => (isRunning(d) ? d : undefined),
      () => undefined,
    );
}
