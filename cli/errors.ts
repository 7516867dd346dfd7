// Errors that end a command with a known exit status (docs/commands.md, "Exit codes").
import { CommanderError } from 'commander';
import { TemporalUnavailableError } from '../worker/errors';

// Defined beside the client module, which throws them too.
import { EXIT_CODES, InfrastructureError, NeverRunError, UsageError } from '../client/errors';
export { EXIT_CODES, InfrastructureError, NeverRunError, UsageError };

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
