// The errors the client module ends a command with, each with its exit status (docs/commands.md,
// "Exit status"). The CLI re-exports them (cli/errors.ts) and maps every error to its status.
import type { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure } from '@temporalio/common';

/**
 * Every exit status reelflow ends with. docs/commands.md has the same table, and
 * test/unit/cli/exit-codes.test.ts compares the two.
 */
export const EXIT_CODES = {
  succeeded: 0,
  notAllSucceeded: 1,
  usage: 2,
  unreachable: 3,
  interrupted: 130,
} as const;

/** Temporal, every gateway address, or storage is unreachable: exit 3. */
export class InfrastructureError extends Error {
  override readonly name = 'InfrastructureError';
  readonly exitCode = EXIT_CODES.unreachable;
}

/** Bad usage or input; nothing was started: exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly exitCode = EXIT_CODES.usage;
}

/**
 * The job file is valid but the job was never run: nothing to show. One sentence and exit 1 (the
 * job's items have not succeeded) from status, results and report alike (docs/commands.md).
 */
export class NeverRunError extends Error {
  override readonly name = 'NeverRunError';
  readonly exitCode = EXIT_CODES.notAllSucceeded;
  constructor(
    readonly job: string,
    jobFile: string,
  ) {
    super(`${job} has not been run: start it with reelflow run ${jobFile}`);
  }

  /** What `--json` (and `results --format json`) prints instead of the sentence. */
  toJSON(): { job: string; state: 'never_run'; message: string } {
    return { job: this.job, state: 'never_run', message: this.message };
  }
}

/**
 * The job's workflow failed. The SDK's error says only "Workflow execution failed": the cause is
 * in its chain (an activity's failure, and that failure's own message), which is what this says,
 * naming the workflow and the activity. Exit 1: the job's items have not all succeeded.
 */
export class JobFailedError extends Error {
  override readonly name = 'JobFailedError';
  readonly exitCode = EXIT_CODES.notAllSucceeded;
  constructor(workflowId: string, error: WorkflowFailedError) {
    super(`${workflowId} failed: ${failureChain(error.cause) ?? error.message}`);
  }
}

/** How deep a cause chain is followed: Temporal nests an activity's failure in one or two links. */
const MAX_CAUSES = 8;

/** Each link of a failure's cause chain in words, outermost first; undefined without one. */
export function failureChain(failure: unknown): string | undefined {
  const parts: string[] = [];
  let link = failure;
  for (let depth = 0; link instanceof Error && depth < MAX_CAUSES; depth++) {
    if (link instanceof ActivityFailure) parts.push(`its activity ${link.activityType ?? '(unnamed)'} failed`);
    else if (link instanceof ChildWorkflowFailure)
      parts.push(`its workflow ${link.execution?.workflowId ?? link.workflowType ?? ''} failed`);
    else if (link instanceof ApplicationFailure && link.type && link.type !== 'Error') parts.push(`${link.type}: ${link.message}`);
    else parts.push(link.message);
    link = link.cause;
  }
  return parts.length > 0 ? parts.join(': ') : undefined;
}
