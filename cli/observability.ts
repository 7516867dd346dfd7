// `--metrics`, `--log-format` and `--log-level` of the commands that run a worker (worker, run);
// client/session.ts applies them.
import { Option, type Command } from 'commander';
import { LOG_FORMATS, LOG_LEVELS } from '../worker/log';

export function addObservabilityOptions(command: Command): Command {
  return command
    .option(
      '--metrics <host:port>',
      "serve Prometheus metrics (the Temporal SDK's and reelflow's) at http://HOST:PORT/metrics, and /healthz and /readyz " +
        '(docs/deploy.md); 0.0.0.0:PORT for every interface',
    )
    .addOption(
      new Option('--log-format <format>', 'file: logs go to <state dir>/logs/reelflow.log; json: one JSON object per line on stdout')
        .choices(LOG_FORMATS)
        .default('file'),
    )
    .option('--log-level <level>', `the least severe log lines written: ${LOG_LEVELS.join(', ')} (default: REELFLOW_LOG_LEVEL, else info)`);
}
