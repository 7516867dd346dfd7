// Job events out (docs/notifications.md). Each event is one NotifyWorkflow, started by the job as an
// abandoned child: the job ends at once, and the deliveries outlive it, retried by whichever worker
// of the job's queue runs. Its input holds target names and the event, never an address or secret
// (the worker resolves those: activities/notify.ts). Its id names the event, so an event that a
// replayed or repeated start asks for again is not sent twice.
import {
  ActivityFailure,
  ApplicationFailure,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  log,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type * as activities from '../activities/definitions';
import type { JobEvent, JobEventData } from '../activities/notify-event';
import type { NotifyEventType } from '../jobfile/notify-settings';
import { FailureType } from '../domain/failures';
import { LogEvent, bounded } from '../activities/log-events';
import { notifyWorkflowId } from './ids';
import { bookkeeping } from './activities';
import { hasPatch } from './patches';
import { endedCount, type StateCounts } from '../domain/end-states';
import type { ItemOutcome, JobCarry } from './types';

export interface NotifyInput {
  event: JobEvent;
  targets: string[];
  /** The event's identity (activities/notify.ts webhookIdFor): job workflow id, first run id, type, item key. */
  eventKey: string;
}

export interface NotifyDelivery {
  target: string;
  state: 'delivered' | 'skipped' | 'gave_up';
  attempts?: number;
  webhookId?: string;
  error?: string;
}

/**
 * The longest a delivery is retried, whatever a target's retry_for says (the activity gives up at
 * retry_for, at most 24 h): a bound on the workflow itself.
 */
const DELIVERY_WINDOW = '25 hours';

/** Sends the event to each target at once; each is retried on its own, with backoff. Never fails. */
export async function NotifyWorkflow(input: NotifyInput): Promise<NotifyDelivery[]> {
  return Promise.all(
    input.targets.map(async (target): Promise<NotifyDelivery> => {
      // The activity id names the target, so `status` can tell each delivery's attempts apart.
      const { deliverEvent } = proxyActivities<typeof activities>({
        activityId: `notify:${target}`,
        startToCloseTimeout: '30 seconds',
        scheduleToCloseTimeout: DELIVERY_WINDOW,
        retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
      });
      try {
        const sent = await deliverEvent({ target, event: input.event, eventKey: input.eventKey });
        return { target, state: sent.status === 0 ? 'skipped' : 'delivered', attempts: sent.attempts, webhookId: sent.webhookId };
      } catch (error) {
        const cause = error instanceof ActivityFailure ? error.cause : error;
        const message = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause);
        return { target, state: 'gave_up', error: bounded(message) };
      }
    }),
  );
}

/**
 * Starts the event's NotifyWorkflow for `targets` (names) and returns once it started: never waits
 * for a delivery, never fails the job (a start that fails is logged; the event is best effort
 * beyond at-least-once delivery once started).
 */
export async function startNotify(type: NotifyEventType, data: JobEventData, targets: readonly string[], itemKey?: string): Promise<void> {
  if (targets.length === 0) return;
  const info = workflowInfo();
  const name = itemKey === undefined ? type : `${type}/${itemKey}`;
  const eventKey = `${data.workflow_id}/${info.firstExecutionRunId}/${name}`;
  try {
    await startChild(NotifyWorkflow, {
      workflowId: notifyWorkflowId(data.workflow_id, info.firstExecutionRunId, name),
      args: [{ event: { type, timestamp: new Date(Date.now()).toISOString(), data }, targets: [...targets], eventKey }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return; // this event is on its way already
    log.warn('could not start sending a job event', {
      event: LogEvent.jobEventNotStarted,
      jobId: data.workflow_id,
      type,
      reason: bounded((error as Error | undefined)?.message),
    });
  }
}

/** How the job ended, in the event's words. */
export function jobOutcome(carry: JobCarry): NonNullable<JobEventData['outcome']> {
  if (carry.canceled) return 'canceled';
  if (carry.stoppedBy?.kind === FailureType.budgetReached) return FailureType.budgetReached;
  if (carry.fatal !== undefined) return 'stopped';
  const { counts } = carry;
  const bad = endedCount(counts) - counts.succeeded;
  if (bad === 0) return 'succeeded';
  return counts.succeeded + counts.skipped > 0 ? 'partial' : 'failed';
}

/** The event's data from what the job holds: counts, spend, where the files are, the cause. */
export function jobEventData(carry: JobCarry, workflowId: string, extra: Partial<JobEventData> = {}): JobEventData {
  const { output } = carry.prepared.settings;
  return {
    job: carry.prepared.settings.job,
    workflow_id: workflowId,
    counts: { ...(carry.counts as StateCounts) },
    spend_usd: carry.budget ? carry.budget.spentUsd : null,
    output: output.storage === 's3' && output.s3 ? `s3://${output.s3.bucket}/${output.s3.prefix}` : (output.dir ?? ''),
    cause: carry.stoppedBy?.message ?? carry.fatal ?? null,
    ...extra,
  };
}

/** With it, job.ended's spend_usd is the job's spend ledger (activities/job-spend.ts); before, the budget's count or null. */
const SPEND_FROM_LEDGER = 'job-ended-spend-from-ledger';

/** At most this many item.failed events per job: a job whose every item fails sends a few, then job.ended says the rest. */
export const MAX_ITEM_EVENTS = 20;

/**
 * The job's events (docs/notifications.md): which targets take which event (asked of a worker once,
 * when the job starts, and carried across continue-as-new), and the event workflows started and
 * not yet confirmed, which the job waits for before it continues as new or ends.
 */
export class JobEvents {
  private readonly starting: Promise<void>[] = [];

  constructor(
    private readonly carry: JobCarry,
    private readonly workflowId: string,
  ) {}

  /** The job's targets: the job file's notify and `run --notify`, once each. */
  static targets(settingsNotify: readonly string[] | undefined, runNotify: readonly string[] | undefined): string[] {
    return [...new Set([...(settingsNotify ?? []), ...(runNotify ?? [])])];
  }

  /** First run of a job with targets: learn their events, send job.started to those who take it. */
  async start(targets: string[]): Promise<void> {
    this.carry.notify = { subscribed: await bookkeeping.notifySubscriptions({ targets }), itemEvents: 0 };
    await startNotify('job.started', jobEventData(this.carry, this.workflowId), this.takers('job.started'));
  }

  private takers(type: NotifyEventType): string[] {
    const subscribed = this.carry.notify?.subscribed ?? {};
    return Object.keys(subscribed).filter((name) => subscribed[name]!.includes(type));
  }

  /** An item ended without succeeding: item.failed to those who take it, up to MAX_ITEM_EVENTS per job. */
  itemEnded(outcome: ItemOutcome): void {
    const notify = this.carry.notify;
    if (!notify || outcome.state === 'succeeded' || outcome.notStarted || notify.itemEvents >= MAX_ITEM_EVENTS) return;
    const takers = this.takers('item.failed');
    if (takers.length === 0) return;
    notify.itemEvents += 1;
    const data = jobEventData(this.carry, this.workflowId, {
      cause: bounded(outcome.error?.message) ?? null,
      item: { key: outcome.key, model: outcome.model, state: outcome.state },
    });
    this.starting.push(startNotify('item.failed', data, takers, outcome.key));
  }

  /** Before continue-as-new: every event started so far has its workflow. */
  async settled(): Promise<void> {
    await Promise.all(this.starting.splice(0));
  }

  /** The job ended (`canceled`: by a Temporal cancellation, in a scope that cannot be canceled). */
  async ended(canceled = false): Promise<void> {
    if (!this.carry.notify) return;
    await this.settled();
    const outcome = canceled ? 'canceled' : jobOutcome(this.carry);
    const takers = this.takers('job.ended');
    const spend = takers.length > 0 && hasPatch(SPEND_FROM_LEDGER) ? await this.spendUsd() : undefined;
    await startNotify('job.ended', jobEventData(this.carry, this.workflowId, { outcome, ...spend }), takers);
  }

  /** The job's spend ledger, as `status` shows it; the budget's count (or null) when the ledger cannot be read now. */
  private async spendUsd(): Promise<Partial<JobEventData>> {
    const { output, enhance } = this.carry.prepared.settings;
    try {
      return { spend_usd: await bookkeeping.jobSpendUsd({ output, enhance: enhance !== undefined }) };
    } catch (error) {
      log.warn('could not read the spend ledger for job.ended', {
        event: LogEvent.jobEventSpendNotRead,
        jobId: this.workflowId,
        reason: bounded((error as Error | undefined)?.message),
      });
      return {};
    }
  }
}
