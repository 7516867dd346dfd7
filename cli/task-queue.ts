// The task queue that the CLI's clients start jobs on and its workers poll: one name for both.
export const TASK_QUEUE = process.env.REELFLOW_TASK_QUEUE ?? 'reelflow';
