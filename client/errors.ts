// The errors the client module ends a command with, each with its exit status (docs/commands.md,
// "Exit status"). The CLI re-exports them (cli/errors.ts) and maps every error to its status.

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
