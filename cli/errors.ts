// Errors that end a command with a known exit status (spec/cli.md, "Exit status").
import { CommanderError } from 'commander';
import { TemporalUnavailableError } from '../worker/errors';

// Defined beside the client module, which throws them too.
import { InfrastructureError, NeverRunError, UsageError } from '../client/errors';
export { InfrastructureError, NeverRunError, UsageError };

/** The exit status a command that threw `error` ends with. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof UsageError || error instanceof InfrastructureError || error instanceof NeverRunError) return error.exitCode;
  if (error instanceof TemporalUnavailableError) return 3;
  return 1;
}
