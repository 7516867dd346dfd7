// Errors that end a command with a known exit status (docs/commands.md, "Exit codes").
import { CommanderError } from 'commander';
import { TemporalUnavailableError } from '../worker/errors';

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

/** The exit status a command that threw `error` ends with. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0) return EXIT_CODES.succeeded;
    // A command's own `command.error(..., { code: 'reelflow.…', exitCode })` says which; commander's
    // own usage errors carry 1, and are bad usage.
    const own = error.code.startsWith('reelflow.') && (Object.values(EXIT_CODES) as number[]).includes(error.exitCode);
    return own ? error.exitCode : EXIT_CODES.usage;
  }
  if (error instanceof UsageError || error instanceof InfrastructureError || error instanceof NeverRunError) return error.exitCode;
  if (error instanceof TemporalUnavailableError) return EXIT_CODES.unreachable;
  return EXIT_CODES.notAllSucceeded;
}
