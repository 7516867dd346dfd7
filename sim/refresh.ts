// A gateway that refreshes its tasks from the upstream in rounds (new-api: one round, then a 15 s
// sleep) answers every status check with the reading of the last round: checks between rounds see
// the same status and progress, and a task created after the last round has not been read at all.
import type { SimContext } from './context';
import { viewAt, type Task, type TaskView } from './tasks';

export interface Reading {
  view: TaskView;
  /** Rounds that have read this task since its creation: 0 = not read yet (the gateway's NOT_START). */
  round: number;
}

/** The reading a status check gets at `now`; `refreshMs` 0 means every check reads the upstream live. */
export function readingAt(task: Task, now: number, startedAt: number, refreshMs: number): Reading {
  if (refreshMs <= 0) return { view: viewAt(task, now), round: 0 };
  const lastRound = startedAt + Math.floor(Math.max(0, now - startedAt) / refreshMs) * refreshMs;
  if (lastRound < task.createdAt) {
    const submitTime = Math.floor(task.createdAt / 1000);
    return { view: { status: 'NOT_START', progress: 0, submitTime, startTime: 0, finishTime: 0 }, round: 0 };
  }
  const firstRound = startedAt + Math.ceil((task.createdAt - startedAt) / refreshMs) * refreshMs;
  return { view: viewAt(task, lastRound), round: Math.round((lastRound - firstRound) / refreshMs) + 1 };
}

/** The reading this simulator gives now; a status check (`check`) is counted against its round. */
export function currentReading(ctx: SimContext, task: Task, check = false): Reading {
  const reading = readingAt(task, ctx.now(), ctx.startedAt, ctx.cfg.refreshMs);
  if (check && ctx.cfg.refreshMs > 0) ctx.stats.checkedReading(task.id, reading.round);
  return reading;
}
