// Workflow ids make runs idempotent: one id per job (attach if running), one per item.

export function jobWorkflowId(jobName: string): string {
  return `reelflow-${jobName}`;
}

export function renderWorkflowId(jobWorkflowIdValue: string, itemKey: string): string {
  return `${jobWorkflowIdValue}/${itemKey}`;
}

export function scheduleId(jobName: string): string {
  return `reelflow-${jobName}`;
}
