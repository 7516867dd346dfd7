// Workflow ids make runs idempotent: one id per job (attach if running), one per item.

export function jobWorkflowId(jobName: string): string {
  return `reelflow-${jobName}`;
}

export function renderWorkflowId(jobWorkflowIdValue: string, itemKey: string): string {
  return `${renderWorkflowIdPrefix(jobWorkflowIdValue)}${itemKey}`;
}

/** What every item workflow id of a job starts with (a visibility query's STARTS_WITH). */
export function renderWorkflowIdPrefix(jobWorkflowIdValue: string): string {
  return `${jobWorkflowIdValue}/`;
}

export function scheduleId(jobName: string): string {
  return `reelflow-${jobName}`;
}
