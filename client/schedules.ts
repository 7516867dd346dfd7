// A job's schedule on Temporal: a Schedule whose action starts JobWorkflow (named by its
// definition, not a string) on the shared task queue. The CLI's `schedule` command prints.
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  type Client,
  type ScheduleDescription,
  type ScheduleHandle,
  type ScheduleOptions,
  type ScheduleUpdateOptions,
} from '@temporalio/client';
import { JobWorkflow } from '../workflows/job';
import type { JobInput } from '../workflows/types';

/** The schedule's spec and policies as the CLI builds them; the action is always "start the job". */
export type JobScheduleOptions = Omit<ScheduleOptions, 'action'> & {
  action: { workflowId: string; taskQueue: string; input: JobInput; memo: Record<string, unknown> };
};

/** The Temporal schedule options for a job's schedule: its action starts JobWorkflow with `input`. */
export function scheduleOptions(options: JobScheduleOptions) {
  const { workflowId, taskQueue, input, memo } = options.action;
  return {
    ...options,
    action: { type: 'startWorkflow' as const, workflowType: JobWorkflow, taskQueue, workflowId, args: [input] as [JobInput], memo },
  } satisfies ScheduleOptions;
}

export interface Found {
  id: string;
  handle: ScheduleHandle;
  described: ScheduleDescription;
}

/**
 * Creates the schedule, or updates it when it exists (`update` gets the schedule as it is and
 * returns what it becomes). Says which it did.
 */
export async function createOrUpdateSchedule(
  client: Client,
  options: ReturnType<typeof scheduleOptions>,
  update: (previous: ScheduleDescription) => ScheduleUpdateOptions,
): Promise<{ outcome: 'created' | 'updated'; found: Found }> {
  const id = options.scheduleId;
  const handle = client.schedule.getHandle(id);
  let outcome: 'created' | 'updated';
  try {
    await client.schedule.create(options);
    outcome = 'created';
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await handle.update(update);
    outcome = 'updated';
  }
  return { outcome, found: { id, handle, described: await handle.describe() } };
}

/** The first of `ids` that names a schedule; undefined when none does. */
export async function findSchedule(client: Client, ids: readonly string[]): Promise<Found | undefined> {
  for (const id of ids) {
    const found = await describeSchedule(client, id);
    if (found) return found;
  }
  return undefined;
}

/** The schedule and its description; undefined when it does not exist (or was just deleted). */
export async function describeSchedule(client: Client, id: string): Promise<Found | undefined> {
  const handle = client.schedule.getHandle(id);
  try {
    return { id, handle, described: await handle.describe() };
  } catch (error) {
    if (error instanceof ScheduleNotFoundError) return undefined;
    throw error;
  }
}

/** The ids of the schedules that start jobs (JobWorkflow) and whose id starts with `prefix`, sorted. */
export async function jobScheduleIds(client: Client, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const summary of client.schedule.list()) {
    if (summary.scheduleId.startsWith(prefix) && (summary.action?.workflowType ?? JobWorkflow.name) === JobWorkflow.name)
      ids.push(summary.scheduleId);
  }
  return ids.sort();
}
