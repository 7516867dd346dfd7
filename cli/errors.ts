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

/** The exit status a command that threw `error` ends with. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof UsageError || error instanceof InfrastructureError) return error.exitCode;
  if (error instanceof TemporalUnavailableError) return 3;
  return 1;
}
