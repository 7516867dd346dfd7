// How an item's run can end, and the counts a job keeps of them: one list, the unions derived from
// it, and the sums every reader takes of the counts (the workflow's ETA, the client's countdown of
// it, the live display). `blocked` came with chains (docs/chains.md): the counts of jobs from
// before it have no `blocked`.
import type { FailureType } from './failures';

/** The states an item that was started can end in (a manifest row's `state`). */
export const RENDER_END_STATES = ['succeeded', 'failed', 'timed_out', 'canceled', 'unknown'] as const;
export type RenderEndState = (typeof RENDER_END_STATES)[number];

/**
 * Every end state: those of a render, and `blocked`, an item that needs another (docs/chains.md)
 * whose need ended otherwise than succeeded; it was never started, and the job counts it, naming the need.
 */
export const END_STATES = [...RENDER_END_STATES, 'blocked'] as const;
export type ItemEndState = (typeof END_STATES)[number];

/** A job's count of each end state, and of the items a run found done already (`skipped`). */
export type StateCounts = Record<RenderEndState, number> & { blocked?: number; skipped: number };

/** Counts before any item ended. `blocked` comes with the first blocked item: other jobs' counts stay as they were. */
export function emptyCounts(): StateCounts {
  // The key order is part of the workflow's state as it is carried on (continue-as-new): keep it.
  return { succeeded: 0, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 };
}

/** Items that ended this job, whatever their end (not those found done already). */
export function endedCount(counts: StateCounts): number {
  return renderedCount(counts) + (counts.blocked ?? 0);
}

/** Items that ended after being started: what a rate of renders counts (a blocked item ends at once, unrendered). */
export function renderedCount(counts: StateCounts): number {
  return RENDER_END_STATES.reduce((sum, state) => sum + counts[state], 0);
}

/** Items the job has settled: ended, or found done already; what a display's `done/total` counts. */
export function settledCount(counts: StateCounts): number {
  return endedCount(counts) + counts.skipped;
}

/** How a whole job ended, in its job.ended event's words (docs/notifications.md). */
export type JobOutcome = 'succeeded' | 'partial' | 'failed' | typeof FailureType.budgetReached | 'stopped' | 'canceled';
