// A job event as reelflow sends it (docs/notifications.md): one JSON object per event, the same for
// every target kind, rendered as each target's receiver expects (activities/notify-send.ts). Types
// only and pure helpers: the workflow builds the event from what it already holds in history (job
// name, counts, output location, the stop's message), never a target's address or secret.
import type { JobOutcome } from '../domain/end-states';
import type { NotifyEventType } from '../jobfile/notify-settings';

export interface JobEventData {
  job: string;
  workflow_id: string;
  /** job.ended only. */
  outcome?: JobOutcome;
  counts: Record<string, number>;
  /** What the job spent as its budget counted it; null when the job has no budget (the manifest holds the per-item figures). */
  spend_usd: number | null;
  /** Where the files are: a local directory or `s3://bucket/prefix`. */
  output: string;
  /** Why the job stopped or the item failed; null otherwise. */
  cause: string | null;
  /** item.failed only: which item, and how it failed. */
  item?: { key: string; model: string; state: string };
}

export interface JobEvent {
  type: NotifyEventType;
  /** ISO 8601, when the event happened (the workflow's clock). */
  timestamp: string;
  data: JobEventData;
}

/** The longest cause (a gateway's message) an event carries: events stay small and bounded. */
export const MAX_CAUSE_CHARS = 1_000;

export function boundedCause(text: string | undefined): string | null {
  if (text === undefined) return null;
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ');
  return clean.length > MAX_CAUSE_CHARS ? `${clean.slice(0, MAX_CAUSE_CHARS)}…` : clean;
}

/** A sample event for `reelflow notify test`: the shape of a real job.ended. */
export function sampleEvent(now = new Date()): JobEvent {
  return {
    type: 'job.ended',
    timestamp: now.toISOString(),
    data: {
      job: 'notify-test',
      workflow_id: 'reelflow-notify-test',
      outcome: 'succeeded',
      counts: { succeeded: 3, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 },
      spend_usd: 1.5,
      output: '/tmp/reelflow-notify-test/out',
      cause: null,
    },
  };
}
