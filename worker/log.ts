// Structured logs (pino), one JSON object per line. By default into a file in the state directory,
// `<state>/logs/reelflow.log` (`--verbose` mirrors it to stderr); `--log-format json` sends them to
// stdout instead, for a supervisor or a container platform that collects a process's output.
// Every line passes through redaction on its way out: the key never reaches a log.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { redact, redactObject } from '../gateway/redact';
import { stateDirectory } from './state-dir';

export const LOG_FORMATS = ['file', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** `--log-level` / `REELFLOW_LOG_LEVEL` (docs/logs.md): the least severe lines written. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

export class LogLevelError extends Error {}

/**
 * The level from the command line's `--log-level`, else `REELFLOW_LOG_LEVEL`, else info. An unknown
 * value is refused naming the allowed ones (the CLI makes it a usage error, exit 2).
 */
export function chooseLogLevel(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): LogLevel {
  const [value, source] = flag !== undefined ? [flag, '--log-level'] : [env.REELFLOW_LOG_LEVEL, 'REELFLOW_LOG_LEVEL'];
  if (value === undefined || value === '') return DEFAULT_LOG_LEVEL;
  const level = value.toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new LogLevelError(`${source} ${JSON.stringify(value)} is not a log level: use one of ${LOG_LEVELS.join(', ')}`);
}

/**
 * A log line as it may leave the process: redacted, and still one JSON object. Redacting the text
 * itself can cut an escape sequence in half (`api_key=\"…`), so a line that needs redaction is
 * rebuilt from its redacted values instead.
 */
export function redactedLine(line: string): string {
  const clean = redact(line);
  if (clean === line) return line;
  try {
    return `${JSON.stringify(redactObject(JSON.parse(line) as unknown))}\n`;
  } catch {
    return clean; // not JSON (pino writes nothing else): the redacted text
  }
}

/** Where lines go: chosen once the command line is read (configureLog), before the first line. */
class LogSink {
  format: LogFormat = 'file';
  private file: pino.DestinationStream | undefined;
  private stdout: pino.DestinationStream | undefined;
  private stderr: pino.DestinationStream | undefined;

  write(line: string): void {
    const out = redactedLine(line);
    this.primary().write(out);
    if (process.env.REELFLOW_VERBOSE === '1') this.mirror().write(out);
  }

  private primary(): pino.DestinationStream {
    if (this.format === 'json') return (this.stdout ??= pino.destination({ dest: 1, sync: true }));
    return (this.file ??= openLogFile());
  }

  private mirror(): pino.DestinationStream {
    return (this.stderr ??= pino.destination({ dest: 2, sync: true }));
  }
}

/** The log file, opened at the first line; stderr when the state directory is not writable. */
function openLogFile(): pino.DestinationStream {
  const dir = join(stateDirectory(), 'logs');
  try {
    mkdirSync(dir, { recursive: true });
    return pino.destination({ dest: join(dir, 'reelflow.log'), sync: false, mkdir: true });
  } catch {
    return pino.destination({ dest: 2, sync: false });
  }
}

const sink = new LogSink();

/** `--log-format`: call before anything logs (lines written earlier stay where they went). */
export function configureLog(options: { format: LogFormat }): void {
  sink.format = options.format;
}

/**
 * The level of every line from now on, this process's and the SDK's (worker/runtime.ts hands the
 * SDK's lines of every level to this logger). Kept in the environment too, so a worker this
 * command starts in another process (run --detach) logs at the same level.
 */
export function setLogLevel(level: LogLevel): void {
  log.level = level;
  process.env.REELFLOW_LOG_LEVEL = level;
}

export function logFormat(): LogFormat {
  return sink.format;
}

export const log = pino(
  {
    // Until the command line is read (setLogLevel): the environment's level, or info.
    level: LOG_LEVELS.find((l) => l === process.env.REELFLOW_LOG_LEVEL?.toLowerCase()) ?? DEFAULT_LOG_LEVEL,
    base: { pid: process.pid },
    redact: { paths: ['*.authorization', '*.Authorization', '*["x-api-key"]', 'headers.*'], censor: '[redacted]' },
    hooks: {
      // Messages and string arguments are scrubbed for key-looking text as well.
      logMethod(args, method) {
        method.apply(this, args.map((a) => (typeof a === 'string' ? redact(a) : a)) as Parameters<typeof method>);
      },
    },
    formatters: {
      // Each value on its own (redacting the serialised text could break its JSON).
      log: (object) => redactObject(object),
    },
  },
  sink,
);
