// Structured logs (pino) to a file in the state directory; `--verbose` mirrors them to stderr.
// Every line passes through redaction: the key never reaches a log.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { redact } from '../gateway/redact';
import { stateDirectory } from './state-dir';

function createLogger(): pino.Logger {
  const dir = join(stateDirectory(), 'logs');
  let destination: pino.DestinationStream;
  try {
    mkdirSync(dir, { recursive: true });
    destination = pino.destination({ dest: join(dir, 'reelflow.log'), sync: false, mkdir: true });
  } catch {
    destination = pino.destination({ dest: 2, sync: false });
  }
  const streams: pino.StreamEntry[] = [{ stream: destination, level: 'debug' }];
  if (process.env.REELFLOW_VERBOSE === '1') streams.push({ stream: pino.destination({ dest: 2, sync: true }), level: 'debug' });
  return pino(
    {
      level: 'debug',
      base: { pid: process.pid },
      redact: { paths: ['*.authorization', '*.Authorization', '*["x-api-key"]', 'headers.*'], censor: '[redacted]' },
      hooks: {
        // Messages and string fields are scrubbed for key-looking text as well.
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === 'string' ? redact(a) : a)) as Parameters<typeof method>);
        },
      },
      formatters: {
        log: (object) => JSON.parse(redact(JSON.stringify(object))) as Record<string, unknown>,
      },
    },
    pino.multistream(streams),
  );
}

export const log = createLogger();
