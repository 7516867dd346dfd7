// Proof, for the workflow, of whether a create may have reached the gateway.
//
// Temporal can lose an activity task between the server and a worker (the task is recorded as
// started, the worker never runs it), and a worker can die before its first request leaves. Both
// end as an activity timeout, which alone cannot tell "never sent" from "sent, answer lost". So,
// before the first byte of a create is sent, the activity records a heartbeat with the server and
// waits for the server to accept it. A timed-out create whose failure carries no such heartbeat
// therefore sent nothing, and the workflow may create again without risking a second paid render.
// Limits: on a multi-cluster namespace heartbeat details replicate asynchronously, so a failover
// right after the record could lose it; so could an operator's activity reset. Both are rare and
// operator-driven; the single-cluster server stores the record before it answers.
import { Context } from '@temporalio/activity';
import { FailureType } from '../domain/failures';
import { finalFailure } from './failures';

/**
 * Heartbeat details a create activity has the server record before it sends anything (see
 * activities/create-marker.ts): a create that timed out without them provably sent nothing.
 */
export interface CreateSendingDetails {
  createMaySend: true;
}

/** No prompt, no key: only a flag, because heartbeat details end up in workflow history. */
const CREATE_SENDING: CreateSendingDetails = { createMaySend: true };

/** How often a running create tells Temporal it is alive (its heartbeat timeout is a few times this). */
const KEEP_ALIVE_MS = 5_000;

/**
 * Records with the server, and waits for it to accept, that this attempt is about to send its
 * request; then runs `send` while heartbeating the same details. If the record cannot be made (the
 * server is unreachable, or this attempt already timed out), nothing is sent.
 */
export async function sendAfterMarking<T>(send: () => Promise<T>): Promise<T> {
  const context = Context.current();
  try {
    await context.client.activity.heartbeat(context.info.taskToken, CREATE_SENDING);
  } catch (error) {
    throw finalFailure(
      FailureType.createNotSent,
      `the create was not sent: Temporal could not record that it was about to be (${(error as Error).message})`,
    );
  }
  const keepAlive = setInterval(() => context.heartbeat(CREATE_SENDING), KEEP_ALIVE_MS);
  try {
    return await send();
  } finally {
    clearInterval(keepAlive);
  }
}
