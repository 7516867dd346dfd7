// The reelflow command: every command of spec/cli.md, errors mapped to the documented exit status.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { projectRoot } from '../worker/bundle';
import { redact } from '../gateway';
import { log, logFormat } from '../worker/log';
import { registerReportCommand } from './commands/report';
import { exitCodeFor } from './errors';
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

export function buildProgram(): Command {
  const program = new Command('reelflow')
    .description('Durable batch AI video generation on Temporal: YAML job files in, verified videos out.')
    .version((JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version)
    .option('--verbose', 'show structured logs on stderr, and stack traces on errors')
    .showSuggestionAfterError(true)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerValidateCommand(program);
  registerRunCommand(program);
  registerEnhanceCommand(program);
  registerOperateCommands(program);
  registerReportCommand(program, { resolveOutput: resolveReportTarget });
  registerScheduleCommand(program);
  registerWorkerCommand(program);
  registerDoctorCommand(program);
  registerServerCommand(program);
  registerSimCommand(program);
  for (const command of program.commands) command.exitOverride();
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
