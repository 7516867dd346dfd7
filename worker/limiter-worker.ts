// The limiters' queue in this worker process (docs/limits.md): a second worker on
// LIMITER_TASK_QUEUE, started the first time a render here asks for a permit of the shared limits.
// A process whose jobs have no shared limits starts nothing; one whose jobs have them serves the
// limiters they ask, whichever queue the jobs are on (a `run`'s own queue ends with the run).
import { Worker, type NativeConnection } from '@temporalio/worker';
import { LIMITER_TASK_QUEUE, hostLimitersWith, permitHoldersRunning } from '../activities/limiter';
import { workflowSource } from './bundle';
import { log } from './log';

let started: Promise<{ worker: Worker; running: Promise<void> }> | undefined;

/** Lets the permit activity start the limiters' worker on this connection when it first runs here. */
export function hostLimiters(connection: NativeConnection, namespace: string): void {
  hostLimitersWith(async () => {
    started ??= startLimiterWorker(connection, namespace).catch((error: unknown) => {
      started = undefined; // the next ask tries again
      throw error;
    });
    await started;
  });
}

async function startLimiterWorker(connection: NativeConnection, namespace: string) {
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue: LIMITER_TASK_QUEUE,
    ...workflowSource(),
    activities: { permitHoldersRunning },
    // A limiter per key (or key and model) in use: a handful.
    maxCachedWorkflows: 20,
    maxConcurrentWorkflowTaskExecutions: 4,
    maxConcurrentActivityTaskExecutions: 4,
  });
  log.info({ taskQueue: LIMITER_TASK_QUEUE, namespace }, 'worker polling the shared limits');
  const running = worker.run().catch((error: unknown) => {
    log.error({ reason: (error as Error | undefined)?.message }, 'the shared limits worker stopped');
  });
  return { worker, running };
}

let stopping: Promise<void> = Promise.resolve();

/** Stops the limiters' worker, if this process started one; no ask starts it again. Resolves once it has stopped. */
export function stopLimiterWorker(): Promise<void> {
  hostLimitersWith(undefined);
  const current = started;
  started = undefined;
  if (current) {
    stopping = current.then(
      async ({ worker, running }) => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
      },
      () => undefined,
    );
  }
  return stopping;
}
