// The reelflow command: every command of docs/commands.md, errors mapped to the documented exit status.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { projectRoot } from '../worker/bundle';
import { redact } from '../gateway';
import { chooseLogLevel, log, logFormat, LogLevelError, LOG_LEVELS, setLogLevel } from '../worker/log';
import { commandWord } from './argv';
import { exitCodeFor, UsageError } from './errors';
import { suggestMeanings } from './suggest';
import type { registerReportCommand as RegisterReport } from './commands/report';
import type { resolveReportTarget as ResolveReportTarget } from '../review/report-target';

type Register = (program: Command) => void;

/** The function `name` that `module` (a command's file) exports, loaded now. */
function load(module: string, name: string): Register {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand, by design
  const exported = (require(module) as Record<string, unknown>)[name];
  if (typeof exported !== 'function') throw new Error(`${module} exports no ${name}`);
  return exported as Register;
}

/**
 * Every command, in the order help lists them, by the module that defines it. A command line that
 * names one loads only that module (and what it imports): `reelflow status` never loads the job
 * file's schema, `validate` never loads the Temporal client. Help, an unknown word and completion
 * load them all.
 */
const COMMANDS: ReadonlyArray<{ names: readonly string[]; register: () => Register }> = [
  { names: ['validate'], register: () => load('./commands/validate', 'registerValidateCommand') },
  { names: ['run'], register: () => load('./commands/run', 'registerRunCommand') },
  { names: ['enhance'], register: () => load('./commands/enhance', 'registerEnhanceCommand') },
  {
    names: ['status', 'results', 'cancel'],
    register: () => load('./commands/operate', 'registerOperateCommands'),
  },
  {
    names: ['report'],
    register: () => (program) => {
      /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand, by design */
      const { registerReportCommand } = require('./commands/report') as { registerReportCommand: typeof RegisterReport };
      const { resolveReportTarget } = require('../review/report-target') as { resolveReportTarget: typeof ResolveReportTarget };
      /* eslint-enable @typescript-eslint/no-require-imports */
      registerReportCommand(program, { resolveOutput: resolveReportTarget });
    },
  },
  { names: ['review'], register: () => load('./commands/review', 'registerReviewCommand') },
  { names: ['schedule'], register: () => load('./commands/schedule', 'registerScheduleCommand') },
  { names: ['notify'], register: () => load('./commands/notify', 'registerNotifyCommand') },
  { names: ['worker'], register: () => load('./commands/worker', 'registerWorkerCommand') },
  { names: ['doctor'], register: () => load('./commands/doctor', 'registerDoctorCommand') },
  { names: ['server'], register: () => load('./commands/server', 'registerServerCommand') },
  { names: ['sim'], register: () => load('./commands/sim', 'registerSimCommand') },
  {
    names: ['completion'],
    register: () => load('./commands/completion', 'registerCompletionCommand'),
  },
];

/** The commands `argv` needs: the one it names, else all of them. */
function commandsFor(argv: readonly string[]): typeof COMMANDS {
  const word = commandWord(argv);
  // The version is the program's own; completion lists every command, as help does (no command).
  if (word === undefined && argv.some((arg) => arg === '--version' || arg === '-V')) return [];
  const named = word === 'completion' ? undefined : COMMANDS.find((entry) => word !== undefined && entry.names.includes(word));
  return named ? [named] : COMMANDS;
}

export function buildProgram(argv: readonly string[] = []): Command {
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
  for (const entry of commandsFor(argv)) entry.register()(program);
  for (const command of program.commands) command.exitOverride();
  suggestMeanings(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram(argv);
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
