// Facts both the worker and the command line that describes it need, kept apart from the worker's
// module so that describing it does not load the Temporal worker SDK (cli/commands/worker.ts).

/** The shutdown grace of a worker not told otherwise (`run`'s own, `worker` without --shutdown-grace). */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** Concurrent activities (gateway calls, downloads) of a worker not told otherwise (`run`'s own, `worker` without --max-activities). */
export const DEFAULT_MAX_ACTIVITIES = 200;

/** Concurrent workflow tasks of a worker not told otherwise (`run`'s own, `worker` without --max-workflow-tasks). */
export const DEFAULT_MAX_WORKFLOW_TASKS = 40;
