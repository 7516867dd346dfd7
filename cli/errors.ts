// Errors that end a command with a known exit status (spec/cli.md, "Exit status").
import { CommanderError } from 'commander';
import { TemporalUnavailableError } from '../worker/errors';

/** Temporal, every gateway address, or storage is unreachable: exit 3. */
export class InfrastructureError extends Error {
  override readonly name = 'InfrastructureError';
  readonly exitCode = 3;
}

/** Bad usage or input; nothing was started: exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly exitCode = 2;
}

/**
 * The job file is valid but the job was never run: nothing to show. One sentence and exit 1 (the
 * job's items have not succeeded) from status, results and report alike (docs/commands.md).
 */
export class NeverRunError extends Error {
  override readonly name = 'NeverRunError';
  readonly exitCode = 1;
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

/** The exit status a command that threw `error` ends with. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof UsageError || error instanceof InfrastructureError || error instanceof NeverRunError) return error.exitCode;
  if (error instanceof TemporalUnavailableError) return 3;
  return 1;
}
