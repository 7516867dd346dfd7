// Workflow ids make runs idempotent: one id per job (attach if running), one per item.
import { REWRITE_WORKFLOW_PREFIX } from '../activities/log-events';

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

/**
 * The workflow that makes the rewrite of one prompt text for a job (workflows/rewrite.ts): every take
 * asking for it at once meets this id, so one of them asks Messages. Outside the job's item prefix:
 * it is no item of the job.
 */
export function rewriteWorkflowId(jobWorkflowIdValue: string, rewriteId: string): string {
  return `${REWRITE_WORKFLOW_PREFIX}${jobWorkflowIdValue}/${rewriteId}`;
}

/** What every job event workflow id of a job starts with (`status` lists a job's deliveries by it). */
export function notifyWorkflowIdPrefix(jobWorkflowIdValue: string, firstRunId: string): string {
  return `reelflow-notify:${jobWorkflowIdValue}/${firstRunId}/`;
}

/**
 * One job event's workflow (workflows/notify.ts): outside the job's item prefix, one per event of
 * one run of the job (its first run id tells a re-run of the same job file apart).
 */
export function notifyWorkflowId(jobWorkflowIdValue: string, firstRunId: string, event: string): string {
  return `${notifyWorkflowIdPrefix(jobWorkflowIdValue, firstRunId)}${event}`;
}

export function scheduleId(jobName: string): string {
  return `reelflow-${jobName}`;
}

/**
 * The signal a callback sends to an item's render workflow (worker/callback-listener.ts): a hint that
 * its task may have changed, which the workflow checks through the gateway (docs/callbacks.md).
 */
export const TASK_CALLBACK_SIGNAL = 'taskCallback';
