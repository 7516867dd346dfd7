// What Temporal says of a workflow execution, asked in one place with the SDK's own status names.
import type { WorkflowExecutionDescription, WorkflowExecutionInfo } from '@temporalio/client';

type WithStatus = Pick<WorkflowExecutionDescription | WorkflowExecutionInfo, 'status'>;

/** The execution is running (not completed, failed, canceled, terminated, timed out or continued as new). */
export function isRunning(execution: WithStatus): boolean {
  return execution.status.name === 'RUNNING';
}

/** The execution completed: its result (the job's JobResult) can be read. */
export function isCompleted(execution: WithStatus): boolean {
  return execution.status.name === 'COMPLETED';
}

/** The execution's state as reelflow prints it: `running`, `completed`, `failed`, `terminated`, … */
export function stateName(execution: WithStatus): string {
  return execution.status.name.toLowerCase();
}
