// What became of an item's workflow that holds the item's id when the job starts the item: the same
// id in every run of a job (workflows/ids.ts), so the holder is the item's workflow from an earlier
// run of the job. It reports its outcome by signal to the job's workflow id. If it has not reported
// yet, its report will reach the job's current run, which waits for it. If it has, the report went
// to the run that was current then, and waiting for it would be waiting for ever; its work is over
// (its manifest row was written before it reported), and the current run, whose plan read that row
// and still chose the item, needs the id to render the item again.
//
// The history, not only the workflow's status: a workflow that has reported closes in its next
// workflow task, which waits for a worker (the previous run's worker may have stopped in between),
// so "still running" alone cannot tell "has not reported" from "reported, not closed yet".
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

export interface HeldItemId {
  /** The item's workflow id. */
  workflowId: string;
  /** Where, and under which signal name, the item's workflow reports. */
  jobWorkflowId: string;
  signalName: string;
}

export type ItemWorkflowState =
  /** It has not reported: its report will come to the job's current run. */
  | { state: 'running' }
  /** Its work is over and the id is free: it had reported, or ended without reporting. */
  | { state: 'finished'; reported: boolean; status: string; closedHere: boolean };

/** A workflow that has reported closes within milliseconds when a worker is there: wait this long before closing it. */
const CLOSE_WAIT_MS = 3_000;
const CLOSE_POLL_MS = 200;
const CLOSE_REASON =
  "reelflow: this item's workflow had reported its outcome to an earlier run of its job and not closed; " +
  "closed by the job's current run, which needs the item's id";

export async function itemWorkflowState(held: HeldItemId): Promise<ItemWorkflowState> {
  const { client } = Context.current();
  let handle: WorkflowHandle;
  let events: HistoryEvent[];
  try {
    // Pinned to the run that holds the id now, so that closing it can never close another.
    const { runId } = await client.workflow.getHandle(held.workflowId).describe();
    handle = client.workflow.getHandle(held.workflowId, runId);
    events = (await handle.fetchHistory()).events ?? [];
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return { state: 'finished', reported: false, status: 'NOT_FOUND', closedHere: false };
    throw error;
  }
  const reported = reportDelivered(events, held);
  const closed = closeStatus(events.at(-1));
  if (closed) return { state: 'finished', reported, status: closed, closedHere: false };
  if (!reported) return { state: 'running' };
  const status = await closedWithin(handle, CLOSE_WAIT_MS);
  if (status) return { state: 'finished', reported, status, closedHere: false };
  try {
    await handle.terminate(CLOSE_REASON);
  } catch (error) {
    // It closed by itself meanwhile.
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    return { state: 'finished', reported, status: (await handle.describe()).status.name, closedHere: false };
  }
  return { state: 'finished', reported, status: 'TERMINATED', closedHere: true };
}

/**
 * Whether its report reached the job: the signal's "sent" event, not only its "initiated" one (a
 * report still on its way goes to the job's current run).
 */
function reportDelivered(events: HistoryEvent[], held: HeldItemId): boolean {
  const delivered = new Set(
    events.flatMap((e) => {
      const signaled = e.externalWorkflowExecutionSignaledEventAttributes;
      return signaled ? [String(signaled.initiatedEventId)] : [];
    }),
  );
  return events.some((event) => {
    const sent = event.signalExternalWorkflowExecutionInitiatedEventAttributes;
    return (
      !!sent &&
      delivered.has(String(event.eventId)) &&
      sent.signalName === held.signalName &&
      sent.workflowExecution?.workflowId === held.jobWorkflowId
    );
  });
}

/** The status a history's last event closed the workflow with; undefined if it is open. */
function closeStatus(last: HistoryEvent | undefined): string | undefined {
  if (!last) return undefined;
  if (last.workflowExecutionCompletedEventAttributes) return 'COMPLETED';
  if (last.workflowExecutionFailedEventAttributes) return 'FAILED';
  if (last.workflowExecutionTerminatedEventAttributes) return 'TERMINATED';
  if (last.workflowExecutionTimedOutEventAttributes) return 'TIMED_OUT';
  if (last.workflowExecutionCanceledEventAttributes) return 'CANCELED';
  if (last.workflowExecutionContinuedAsNewEventAttributes) return 'CONTINUED_AS_NEW';
  return undefined;
}

async function closedWithin(handle: WorkflowHandle, ms: number): Promise<string | undefined> {
  const { cancellationSignal } = Context.current();
  for (const deadline = Date.now() + ms; Date.now() < deadline && !cancellationSignal.aborted;) {
    const { name } = (await handle.describe()).status;
    if (name !== 'RUNNING') return name;
    await new Promise((r) => setTimeout(r, CLOSE_POLL_MS));
  }
  return undefined;
}
