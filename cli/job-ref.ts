// `JOB.yaml or JOB-ID`: commands accept either. A file is loaded and validated; an id is looked
// up in Temporal, whose history holds the job file's path (and, for a job whose inputs were
// stored, their index's digest: a running job runs that version, whatever the file says now).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { dateIn, formatJobFileError, loadJobFile } from '../jobfile';
import type { FileAccess } from '../jobfile/context';
import type { Plan } from '../jobfile/plan';
import { describeInputLocation, inputLocationFor, type InputsOwner } from '../storage/inputs';
import {
  changedPaths,
  hashJobInputs,
  recordingFiles,
  storeJobInputs,
  type JobInputs,
  type StoredJobInputs,
} from '../storage/inputs-publish';
import { openInputStore, readInputIndex } from '../storage/inputs-store';
import { StorageError } from '../storage/storage';
import { InfrastructureError, UsageError } from './errors';
import { formatBytes } from './output';
import { jobWorkflowId } from '../workflows/ids';
import { JobWorkflow } from '../workflows/job';
import type { JobInput } from '../workflows/types';

/** Loads and validates a job file, or explains every problem at once (exit 2). `pricesFile`: `--prices`. */
export async function loadPlanOrExplain(jobFile: string, runDate?: string, files?: FileAccess, pricesFile?: string): Promise<Plan> {
  const path = resolve(jobFile);
  if (!existsSync(path)) throw new UsageError(`${jobFile}: no such job file`);
  const result = await loadJobFile(path, { runDate, files, pricesFile });
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

/** The workflow id a target names: a job file's job, or an id (with or without the `reelflow-` prefix). */
export async function resolveJob(
  client: Client | undefined,
  target: string,
): Promise<{ workflowId: string; jobFile: string; runDate?: string }> {
  if (looksLikeFile(target)) {
    const reads = recordingFiles();
    const plan = await loadPlanOrExplain(target, undefined, reads);
    let workflowId = jobWorkflowId(plan.job);
    let runDate: string | undefined;
    if (client && plan.schedule) {
      const scheduled = await newestScheduledRun(client, workflowId, plan.schedule.timezone);
      if (scheduled) ({ workflowId, runDate } = scheduled);
    }
    if (client) {
      const note = await inputsChangedNote(client, workflowId, target, () => hashJobInputs(plan, reads.texts));
      if (note) process.stderr.write(`${note}\n`);
    }
    return { workflowId, jobFile: plan.jobFile, ...(runDate ? { runDate } : {}) };
  }
  if (!client) throw new UsageError(`${target}: not a job file`);
  const workflowId = target.startsWith('reelflow-') ? target : jobWorkflowId(target);
  try {
    const input = await startedJobInput(client, workflowId);
    if (!input?.jobFile) throw new Error('no job input');
    return { workflowId, jobFile: input.jobFile, runDate: input.runDate ?? input.carry?.prepared.runDate };
  } catch (error) {
    if ((error as Error).name === 'WorkflowNotFoundError' || /not found/i.test((error as Error).message)) {
      throw new UsageError(`no job with id ${workflowId}: check \`reelflow status\` for recent jobs, or pass the job file`);
    }
    throw error;
  }
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

/** The input the job's current run started with (its first history event), or undefined. */
export async function startedJobInput(client: Client, workflowId: string): Promise<JobInput | undefined> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const payload = started?.input?.payloads?.[0];
  return payload?.data ? (JSON.parse(Buffer.from(payload.data).toString('utf8')) as JobInput) : undefined;
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

/**
 * Stores the job's inputs where workers on other machines read them (storage/inputs-publish.ts):
 * the location named by --inputs or REELFLOW_INPUTS, else beside S3 outputs (a schedule's beside
 * its day folders). Undefined when they stay at their paths (local output, no location named):
 * workers then read them there, as before.
 */
export async function storeInputsOrExplain(
  plan: Plan,
  texts: ReadonlyMap<string, string>,
  named: string | undefined,
  note: (line: string) => void,
  owner: InputsOwner = 'run',
): Promise<StoredJobInputs | undefined> {
  let location;
  try {
    location = inputLocationFor(plan.output, named ?? process.env.REELFLOW_INPUTS, owner);
  } catch (error) {
    if (error instanceof StorageError) throw new UsageError(`--inputs (or REELFLOW_INPUTS): ${error.message}`);
    throw error;
  }
  if (!location) return undefined;
  try {
    const stored = await storeJobInputs(plan, texts, location);
    const { files, uploaded, uploadedBytes } = stored.published;
    const sent = uploaded > 0 ? `${uploaded} object(s) uploaded, ${formatBytes(uploadedBytes)}` : 'all already there';
    note(`inputs: ${files} file(s) stored for the workers at ${stored.where} (${sent})`);
    return stored;
  } catch (error) {
    if (error instanceof StorageError) throw new InfrastructureError(error.message);
    throw error;
  }
}

/** The job workflow's description while it runs; undefined when it has ended, or never ran. */
export function runningExecution(client: Client, workflowId: string): Promise<WorkflowExecutionDescription | undefined> {
  return client.workflow
    .getHandle(workflowId)
    .describe()
    .then(
      (d) => (d.status.name === 'RUNNING' ? d : undefined),
      () => undefined,
    );
}
