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

export function logFormat(): LogFormat {
  return sink.format;
}

export const log = pino(
  {
    level: 'debug',
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
