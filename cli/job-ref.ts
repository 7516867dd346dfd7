// `JOB.yaml or JOB-ID`: commands accept either. A file is loaded and validated; an id is looked
// up in Temporal, whose history holds the job file's path.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { dateIn, formatJobFileError, loadJobFile } from '../jobfile';
import type { Plan } from '../jobfile/plan';
import { UsageError } from './errors';
import { jobWorkflowId } from '../workflows/ids';
import { JobWorkflow } from '../workflows/job';
import type { JobInput } from '../workflows/types';

/** Loads and validates a job file, or explains every problem at once (exit 2). */
export async function loadPlanOrExplain(jobFile: string, runDate?: string): Promise<Plan> {
  const path = resolve(jobFile);
  if (!existsSync(path)) throw new UsageError(`${jobFile}: no such job file`);
  const result = await loadJobFile(path, { runDate });
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
    const plan = await loadPlanOrExplain(target);
    const workflowId = jobWorkflowId(plan.job);
    if (client && plan.schedule) {
      const scheduled = await newestScheduledRun(client, workflowId, plan.schedule.timezone);
      if (scheduled) return { ...scheduled, jobFile: plan.jobFile };
    }
    return { workflowId, jobFile: plan.jobFile };
  }
  if (!client) throw new UsageError(`${target}: not a job file`);
  const workflowId = target.startsWith('reelflow-') ? target : jobWorkflowId(target);
  try {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    const payload = started?.input?.payloads?.[0];
    const input = payload?.data ? (JSON.parse(Buffer.from(payload.data).toString('utf8')) as JobInput) : undefined;
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
