// Delivering one job event to one target (docs/notifications.md). The workflow passes the target's
// name only: the worker resolves it in its own notify.yaml and reads the webhook secret from its own
// environment, so no address and no secret ever lands in workflow history. Retried by Temporal with
// backoff (workflows/notify.ts); every attempt carries the same webhook-id, derived from the event's
// identity, so a receiver drops duplicates. A target's retry_for bounds the retries.
import { createHash } from 'node:crypto';
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { readNotifySettings, type NotifyEventType, type NotifySettings, type NotifyTarget } from '../jobfile/notify-settings';
import type { JobEvent } from './notify-event';
import { LogEvent, bounded } from './log-events';
import { buildRequest, DeliveryError, send, type SendAnswer } from './notify-send';

/** Failure types of a delivery that stops retrying. */
export const NotifyFailure = {
  undefinedTarget: 'notify_target_undefined',
  gaveUp: 'notify_gave_up',
  notDelivered: 'notify_not_delivered',
} as const;

export interface DeliverEventInput {
  /** A target name of the worker's notify.yaml. */
  target: string;
  event: JobEvent;
  /** What makes this event one: the job's workflow id and first run id, the type (and item key). */
  eventKey: string;
}

export interface DeliverEventResult {
  target: string;
  webhookId: string;
  status: number;
  attempts: number;
}

/** `msg_` and 32 hex digits: the same for every retry of one event, different for every event. */
export function webhookIdFor(eventKey: string): string {
  return `msg_${createHash('sha256').update(eventKey).digest('hex').slice(0, 32)}`;
}

/** The secret of a webhook target from this process's environment: a whsec_ value, or an error saying which variable. */
export function webhookSecret(target: NotifyTarget, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (target.kind !== 'webhook' || !target.secretEnv) return undefined;
  const value = env[target.secretEnv];
  if (!value)
    throw new DeliveryError(`${target.name}: ${target.secretEnv} is not set in this worker's environment (the webhook's whsec_ secret)`);
  if (!/^whsec_[A-Za-z0-9+/=]{8,}$/.test(value))
    throw new DeliveryError(`${target.name}: ${target.secretEnv} does not hold a whsec_<base64> secret`);
  return value;
}

/** One attempt of sending `event` to `targetName` (also `reelflow notify test`). */
export async function sendEvent(settings: NotifySettings, targetName: string, event: JobEvent, webhookId: string): Promise<SendAnswer> {
  const target = settings.targets.get(targetName);
  if (!target) throw new DeliveryError(`notify target ${JSON.stringify(targetName)} is not defined in ${settings.path}`);
  const secret = webhookSecret(target);
  return send(target, buildRequest(target, event, webhookId, secret, Date.now()), secret ? [secret] : []);
}

export async function deliverEvent(input: DeliverEventInput): Promise<DeliverEventResult> {
  const { attempt } = Context.current().info;
  const webhookId = webhookIdFor(input.eventKey);
  const settings = readNotifySettings();
  const target = settings.targets.get(input.target);
  if (!target) {
    throw ApplicationFailure.create({
      type: NotifyFailure.undefinedTarget,
      message: `notify target ${JSON.stringify(input.target)} is not defined in this worker's ${settings.path}`,
      nonRetryable: true,
    });
  }
  // The job asked which events the target takes when it started; settings edited since then win.
  if (!target.events.includes(input.event.type)) return { target: input.target, webhookId, status: 0, attempts: attempt };
  try {
    const answer = await sendEvent(settings, input.target, input.event, webhookId);
    return { target: input.target, webhookId, status: answer.status, attempts: attempt };
  } catch (error) {
    const message = error instanceof DeliveryError ? error.message : `${input.target}: could not send the event`;
    const elapsed = Date.now() - Date.parse(input.event.timestamp);
    if (elapsed >= target.retryForMs) {
      throw ApplicationFailure.create({
        type: NotifyFailure.gaveUp,
        message: `gave up after ${attempt} attempts over ${Math.round(elapsed / 60_000)} min (retry_for): ${message}`,
        nonRetryable: true,
      });
    }
    throw ApplicationFailure.create({ type: NotifyFailure.notDelivered, message, nonRetryable: false });
  }
}

/**
 * Which events each of the job's targets takes, from this worker's notify.yaml: asked once when the
 * job starts, so the job starts no event workflow that no target wants. A target this worker does
 * not define (or settings it cannot read) takes job.ended: its delivery then says what is wrong.
 */
export async function notifySubscriptions(input: { targets: string[] }): Promise<Record<string, NotifyEventType[]>> {
  let settings: NotifySettings | undefined;
  try {
    settings = readNotifySettings();
  } catch (error) {
    log.warn('cannot read the notify settings: every job event of this job will be given up', {
      event: LogEvent.jobNotifyTargetsUndefined,
      reason: bounded((error as Error).message),
    });
    settings = undefined;
  }
  const missing = settings ? input.targets.filter((name) => !settings.targets.has(name)) : [];
  if (settings && missing.length > 0) {
    log.warn("the job names notify targets this worker's notify.yaml does not define: their events are given up", {
      event: LogEvent.jobNotifyTargetsUndefined,
      targets: missing,
      settings: settings.path,
    });
  }
  return Object.fromEntries(input.targets.map((name) => [name, settings?.targets.get(name)?.events ?? ['job.ended']]));
}
