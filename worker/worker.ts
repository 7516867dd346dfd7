// The worker: registers the workflows (prebuilt bundle) and activities on the task queue.
import { setFlagsFromString } from 'node:v8';
import { DEFAULT_MAX_ACTIVITIES, DEFAULT_MAX_WORKFLOW_TASKS, DEFAULT_SHUTDOWN_GRACE_MS } from './shutdown';
import { Worker, type NativeConnection } from '@temporalio/worker';
import * as activities from '../activities/definitions';
import { closeActivityResources } from '../activities/context';
import { workflowSource } from './bundle';
import { drainInterceptors } from './drain';
import { watchReadiness } from './health';
import { hostLimiters, stopLimiterWorker } from './limiter-worker';
import { log } from './log';
import { onlyOwnedJobInterceptors, type OwnedJob } from './owned-job';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Concurrent activities (HTTP calls, downloads). */
  maxActivities?: number;
  /** Concurrent workflow tasks. */
  maxWorkflowTasks?: number;
  /** How long running activities may go on after a stop before they are cancelled (`--shutdown-grace`). */
  shutdownGraceMs?: number;
  /**
   * The one job this worker carries (a `run`'s own queue): any other workflow's activity on the
   * queue is refused before it runs (worker/owned-job.ts). Absent: a fleet worker of a shared queue.
   */
  ownedJob?: OwnedJob;
}

const WORKFLOW_THREAD_HEAP_MIB = 256;

/**
 * V8 flags set at run time, before the SDK creates its workflow thread. Left alone, V8 lets both
 * heaps (this thread's and the workflow thread's) grow lazily to about 400 MiB under a long job's
 * churn of short-lived objects; with these the worker stays under 300 MiB at the same speed
 * (BENCHMARKS.md, memory). The young-generation size and the heap bound apply to isolates created
 * from now on (the workflow thread); optimize-for-size is also read while running, so it slows the
 * growth of this thread's heap too.
 */
function favourMemoryOverSpeed(): void {
  setFlagsFromString('--max-semi-space-size=2');
  setFlagsFromString('--optimize-for-size');
  // The workflow thread holds cached workflows (a window's worth, a few KiB each) and the bundle:
  // tens of MiB live. A bound of 256 MiB makes its V8 collect before growing, far above that need.
  setFlagsFromString(`--max-old-space-size=${WORKFLOW_THREAD_HEAP_MIB}`);
}

export async function createReelflowWorker(options: WorkerOptions): Promise<Worker> {
  favourMemoryOverSpeed();
  hostLimiters(options.connection, options.namespace);
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...workflowSource(),
    activities,
    maxConcurrentActivityTaskExecutions: options.maxActivities ?? DEFAULT_MAX_ACTIVITIES,
    maxConcurrentWorkflowTaskExecutions: options.maxWorkflowTasks ?? DEFAULT_MAX_WORKFLOW_TASKS,
    // Enough for a full window of renders plus the job; each cached workflow keeps a sandbox alive.
    maxCachedWorkflows: 500,
    // A graceful stop lets running downloads finish or heartbeat their offset (docs/deploy.md, Drain).
    shutdownGraceTime: options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS,
    // What the grace cut is retried by another worker, not ended as the item's failure.
    interceptors: { activity: [drainInterceptors, ...(options.ownedJob ? [onlyOwnedJobInterceptors(options.ownedJob)] : [])] },
  });
}

/** Runs `worker` until `stop` resolves, then shuts it down and releases pooled connections. */
export async function runWorkerUntil(worker: Worker, stop: Promise<unknown>): Promise<void> {
  void stop.then(() => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    void stopLimiterWorker();
  });
  log.info({ taskQueue: worker.options.taskQueue, namespace: worker.options.namespace }, 'worker polling');
  // /readyz (--metrics) reports on this worker while it runs.
  watchReadiness(worker);
  try {
    await worker.run();
  } finally {
    watchReadiness(undefined);
    await stopLimiterWorker();
    await closeActivityResources();
    log.info('worker stopped');
  }
}
