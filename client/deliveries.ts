// Where a job's events stand (docs/notifications.md): each NotifyWorkflow of one run of the job
// (workflows/notify.ts), read from Temporal's record of it, so `run` and `status` can say it without
// a worker: delivered, retrying (attempt n, the last error), or given up.
import type { Client } from '@temporalio/client';
import type { NotifyDelivery } from '../workflows/notify';
import { notifyWorkflowIdPrefix } from '../workflows/ids';
import { JobEvents } from '../workflows/notify';
import { firstRunIdOf } from '../worker/owned-job';
import type { spawnDetachedWorker } from './detached-worker';
import { startedJobInput } from './jobs';

export interface DeliveryState {
  /** job.ended, job.started, item.failed/<key>. */
  event: string;
  target: string;
  state: 'delivered' | 'skipped' | 'retrying' | 'gave_up' | 'pending';
  attempts?: number;
  lastError?: string;
}

/** The deliveries of the job run whose chain starts at `firstRunId`, for the job's targets. */
export async function jobDeliveries(
  client: Client,
  jobWorkflowId: string,
  firstRunId: string,
  targets: readonly string[],
): Promise<DeliveryState[]> {
  const prefix = notifyWorkflowIdPrefix(jobWorkflowId, firstRunId);
  const states: DeliveryState[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId STARTS_WITH '${prefix}'` })) {
    const event = execution.workflowId.slice(prefix.length);
    states.push(...(await eventDeliveries(client, execution.workflowId, event, targets)));
  }
  return states.sort((a, b) => (a.event < b.event ? -1 : a.event > b.event ? 1 : a.target < b.target ? -1 : 1));
}

async function eventDeliveries(client: Client, workflowId: string, event: string, targets: readonly string[]): Promise<DeliveryState[]> {
  const handle = client.workflow.getHandle(workflowId);
  const described = await handle.describe();
  if (described.status.name === 'COMPLETED') {
    const results = (await handle.result()) as NotifyDelivery[];
    return results.map((r) => ({
      event,
      target: r.target,
      state: r.state,
      ...(r.attempts !== undefined ? { attempts: r.attempts } : {}),
      ...(r.error ? { lastError: r.error } : {}),
    }));
  }
  // Running: a target whose activity is no longer pending has ended; its history says how.
  const closed = await endedActivities(handle);
  const pending = new Map(
    (described.raw.pendingActivities ?? []).map((a) => [String(a.activityId ?? '').replace(/^notify:/, ''), a] as const),
  );
  return targets.map((target): DeliveryState => {
    const ended = closed.get(target);
    if (ended) return { event, target, ...ended };
    const activity = pending.get(target);
    if (!activity) return { event, target, state: 'pending' };
    const attempts = activity.attempt ?? 1;
    const lastError = activity.lastFailure?.message ?? undefined;
    return { event, target, state: lastError ? 'retrying' : 'pending', attempts, ...(lastError ? { lastError } : {}) };
  });
}

/** The deliveries of a running event workflow that have ended, by target, read from its history. */
async function endedActivities(
  handle: ReturnType<Client['workflow']['getHandle']>,
): Promise<Map<string, Omit<DeliveryState, 'event' | 'target'>>> {
  const history = await handle.fetchHistory();
  const targetOf = new Map<string, string>();
  const ended = new Map<string, Omit<DeliveryState, 'event' | 'target'>>();
  for (const e of history.events ?? []) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled?.activityId) targetOf.set(String(e.eventId), scheduled.activityId.replace(/^notify:/, ''));
    const completed = e.activityTaskCompletedEventAttributes;
    if (completed) {
      const target = targetOf.get(String(completed.scheduledEventId));
      const data = completed.result?.payloads?.[0]?.data;
      const result = data
        ? (JSON.parse((typeof data === 'string' ? Buffer.from(data, 'base64') : Buffer.from(data)).toString('utf8')) as {
            status?: number;
            attempts?: number;
          })
        : {};
      if (target)
        ended.set(target, {
          state: result.status === 0 ? 'skipped' : 'delivered',
          ...(result.attempts ? { attempts: result.attempts } : {}),
        });
    }
    const failed = e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
    if (failed) {
      const target = targetOf.get(String(failed.scheduledEventId));
      if (target) ended.set(target, { state: 'gave_up', lastError: failed.failure?.message ?? 'failed' });
    }
  }
  return ended;
}

/** `delivered`, `retrying (attempt 3): <error>`, `gave up: <error>`. */
export function describeDelivery(d: DeliveryState): string {
  if (d.state === 'delivered') return `delivered${d.attempts && d.attempts > 1 ? ` (attempt ${d.attempts})` : ''}`;
  if (d.state === 'skipped') return 'not sent (the target does not take this event)';
  if (d.state === 'pending') return 'sending';
  if (d.state === 'retrying') return `retrying (attempt ${d.attempts ?? '?'}): ${d.lastError ?? ''}`;
  return `gave up: ${d.lastError ?? 'unknown'}`;
}

/**
 * Waits up to `timeoutMs` for the job's events to be delivered (run's own worker carries them while
 * it lasts), then says where each stands.
 */
export async function awaitDeliveries(
  client: Client,
  jobWorkflowId: string,
  firstRunId: string,
  targets: readonly string[],
  timeoutMs: number,
): Promise<DeliveryState[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = await jobDeliveries(client, jobWorkflowId, firstRunId, targets).catch(() => []);
    const open = states.length === 0 || states.some((s) => s.state === 'pending' || s.state === 'retrying');
    if (!open || Date.now() >= deadline) return states;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The deliveries of a job's latest run, for the targets its job file and its `run --notify` named; none without targets. */
export async function deliveriesOfJob(
  client: Client,
  jobWorkflowId: string,
  planNotify: readonly string[] | undefined,
): Promise<DeliveryState[]> {
  const started = await startedJobInput(client, jobWorkflowId).catch(() => undefined);
  const targets = JobEvents.targets(planNotify, started?.notify);
  if (targets.length === 0) return [];
  const firstRunId = await firstRunIdOf(client, jobWorkflowId).catch(() => undefined);
  if (!firstRunId) return [];
  return jobDeliveries(client, jobWorkflowId, firstRunId, targets).catch(() => []);
}

/** One line per delivery: `notify job.ended → studio-slack: retrying (attempt 3): ... answered 500`. */
export function deliveryLines(states: readonly DeliveryState[]): string[] {
  return states.map((s) => `  notify ${s.event} -> ${s.target}: ${describeDelivery(s)}`);
}

/** How many event workflows of the job run whose chain starts at `firstRunId` are still running. */
export async function openDeliveryWorkflows(client: Client, jobWorkflowId: string, firstRunId: string): Promise<number> {
  const prefix = notifyWorkflowIdPrefix(jobWorkflowId, firstRunId);
  let open = 0;
  for await (const execution of client.workflow.list({ query: `WorkflowId STARTS_WITH '${prefix}' AND ExecutionStatus = 'Running'` })) {
    if (execution.status.name === 'RUNNING') open += 1;
  }
  return open;
}

/** The targets a run's job events go to: the job file's and the run's own (`run --notify`), each once. */
export function jobEventTargets(fileTargets: readonly string[] | undefined, runTargets: readonly string[]): string[] {
  return JobEvents.targets(fileTargets, runTargets);
}

export type DeliveryHandOff = ReturnType<typeof spawnDetachedWorker>;

export const isOpen = (s: DeliveryState) => s.state === 'pending' || s.state === 'retrying';

/** What `run` says at its end of the job.ended deliveries: each target's, then who carries those still open. */
export function describeDeliveries(states: DeliveryState[], handedOff: DeliveryHandOff | undefined, jobFile: string): string[] {
  const ended = states.filter((s) => s.event === 'job.ended');
  const lines = ended.map((s) => `notify ${s.target}: ${describeDelivery(s)}`);
  const open = [...new Set(states.filter(isOpen).map((s) => s.target))];
  if (open.length === 0) return lines;
  const names = open.join(', ');
  if (handedOff) {
    const pid = handedOff.pid !== undefined ? ` (pid ${handedOff.pid})` : '';
    lines.push(
      `${names}: not delivered yet: a background worker${pid} retries it until it is delivered or its retry_for has passed, ` +
        `then exits; \`reelflow status ${jobFile}\` shows where it stands (log: ${handedOff.logFile})`,
    );
  } else lines.push(`${names}: retried by the workers of the job's queue (\`reelflow status\` shows it)`);
  return lines;
}
