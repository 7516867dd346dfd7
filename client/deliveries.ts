// Where a job's events stand (docs/notifications.md): each NotifyWorkflow of one run of the job
// (workflows/notify.ts), read from Temporal's record of it, so `run` and `status` can say it without
// a worker: delivered, retrying (attempt n, the last error), or given up.
import type { Client } from '@temporalio/client';
import type { NotifyDelivery } from '../workflows/notify';
import { notifyWorkflowIdPrefix } from '../workflows/ids';

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
  const pending = new Map(
    (described.raw.pendingActivities ?? []).map((a) => [String(a.activityId ?? '').replace(/^notify:/, ''), a] as const),
  );
  return targets.map((target): DeliveryState => {
    const activity = pending.get(target);
    if (!activity) {
      // A running event whose first attempts are not scheduled yet lists no activity at all.
      const running = described.status.name === 'RUNNING';
      return { event, target, state: running ? (pending.size === 0 ? 'pending' : 'delivered') : 'gave_up' };
    }
    const attempts = activity.attempt ?? 1;
    const lastError = activity.lastFailure?.message ?? undefined;
    return { event, target, state: lastError ? 'retrying' : 'pending', attempts, ...(lastError ? { lastError } : {}) };
  });
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
