// Task queues. Jobs started for a fleet (`run --no-worker`, schedules, `run --detach` against a
// configured service) go on the shared queue that `reelflow worker` polls. A `run` that carries its
// job with its own worker puts it on a queue of its own, so that two runs with two keys on one
// server never execute each other's activities (docs/keys.md); child workflows and activities
// inherit their job's queue.
import { randomBytes } from 'node:crypto';

export const TASK_QUEUE = process.env.REELFLOW_TASK_QUEUE ?? 'reelflow';

const RUN_QUEUE_PREFIX = 'reelflow-run-';

export function newRunTaskQueue(): string {
  return `${RUN_QUEUE_PREFIX}${randomBytes(8).toString('hex')}`;
}

/** Whether a queue is one run's own (only the job started there is on it). */
export function isRunTaskQueue(name: string): boolean {
  return name.startsWith(RUN_QUEUE_PREFIX);
}
