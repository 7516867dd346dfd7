// The reelflow command: every command of docs/commands.md, errors mapped to the documented exit status.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { projectRoot } from '../worker/bundle';
import { redact } from '../gateway';
import { chooseLogLevel, log, logFormat, LogLevelError, LOG_LEVELS, setLogLevel } from '../worker/log';
import { registerReportCommand } from './commands/report';
import { registerReviewCommand } from './commands/review';
import { exitCodeFor, UsageError } from './errors';
import { registerNotifyCommand } from './commands/notify';
import { registerRunCommand } from './commands/run';
import { registerServerCommand } from './commands/server';
import { registerSimCommand } from './commands/sim';
import { registerValidateCommand } from './commands/validate';
import { registerWorkerCommand } from './commands/worker';
import { registerOperateCommands } from './commands/operate';
import { registerDoctorCommand } from './commands/doctor';
import { registerEnhanceCommand } from './commands/enhance';
import { registerScheduleCommand } from './commands/schedule';
import { resolveReportTarget } from './report-target';
import { registerCompletionCommand } from './commands/completion';
import { suggestMeanings } from './suggest';

export function buildProgram(): Command {
  const program = new Command('reelflow')
    .description('Durable batch AI video generation on Temporal: YAML job files in, verified videos out.')
    .version((JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version)
    .option('--verbose', 'show structured logs on stderr, and stack traces on errors')
    .option('--log-level <level>', `the least severe log lines written: ${LOG_LEVELS.join(', ')} (default: REELFLOW_LOG_LEVEL, else info)`)
    // Before any command runs: a worker's or run's own --log-level, else the global one (docs/logs.md).
    .hook('preAction', (_program, command) => {
      try {
        setLogLevel(chooseLogLevel(command.optsWithGlobals<{ logLevel?: string }>().logLevel));
      } catch (error) {
        throw error instanceof LogLevelError ? new UsageError(error.message) : error;
      }
    })
    .showSuggestionAfterError(true)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerValidateCommand(program);
  registerRunCommand(program);
  registerEnhanceCommand(program);
  registerOperateCommands(program);
  registerReportCommand(program, { resolveOutput: resolveReportTarget });
  registerReviewCommand(program);
  registerScheduleCommand(program);
  registerNotifyCommand(program);
  registerWorkerCommand(program);
  registerDoctorCommand(program);
  registerServerCommand(program);
  registerSimCommand(program);
  registerCompletionCommand(program);
  for (const command of program.commands) command.exitOverride();
  suggestMeanings(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    process.exitCode = exitCodeFor(error);
    if (error instanceof CommanderError) return; // commander has printed its message already
    const verbose = process.env.REELFLOW_VERBOSE === '1';
    const text = verbose && error instanceof Error && error.stack ? error.stack : ((error as Error).message ?? String(error));
    process.stderr.write(`reelflow: ${redact(text)}\n`);
    // A supervisor reading --log-format json sees why the command ended, in the same stream.
    if (logFormat() === 'json') log.error({ component: 'cli', exitCode: process.exitCode }, (error as Error).message ?? String(error));
    // The command is over. The SDK's Runtime (a --metrics exporter, Core's threads) may hold the
    // process open after a failed connection, so a command that failed would never exit: give
    // output a moment to drain, then end. Unref'd, it never delays an exit that happens anyway.
    setTimeout(() => process.exit(), 1_000).unref();
  }
}
