// The Temporal SDK's Runtime: one per process, installed before the first worker connection, and
// it cannot be changed afterwards, so its logging and its metrics are set in the one call.
// - Logs: the SDK's TypeScript side and Core (its Rust side) both go to our logger (the log file,
//   stderr only with --verbose, or stdout with --log-format json). Left alone, Core prints its
//   warnings (e.g. TMPRL1104 "Workflow task duration exceeded") straight onto the user's terminal.
// - Metrics: with --metrics, a Prometheus exporter serves the SDK's `temporal_*` metrics and
//   reelflow's `reelflow_*` ones (activities/metrics.ts) on /metrics.
import { DefaultLogger, makeTelemetryFilterString, Runtime, type LogLevel, type RuntimeOptions } from '@temporalio/worker';
import { HISTOGRAM_BUCKETS } from '../activities/metrics';
import { MetricsAddressError } from './errors';
import { log } from './log';
import type { MetricsAddress } from './metrics-address';

const LEVELS: Record<LogLevel, 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'debug',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** Core's warnings and errors, its dependencies' errors: what a worker's operator needs, not its tracing. */
export const CORE_LOG_FILTER = makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' });

/** Which part of the process wrote a line: the caller's own (activities say `gateway`), else the SDK's side. */
function componentOf(meta: Record<string, unknown> | undefined): unknown {
  return meta?.component ?? (meta?.sdkComponent === 'core' ? 'temporal-core' : 'temporal-sdk');
}

export function runtimeOptions(metrics?: MetricsAddress): RuntimeOptions {
  return {
    // reelflow's commands handle SIGINT/SIGTERM themselves (`run` stops its poll loop, then its worker,
    // then its connection, in that order; `worker` shuts down gracefully). Left to the SDK, a signal
    // also shuts the worker down behind the command's back, and one that comes before the command's
    // handler is installed is swallowed: the command goes on without its worker.
    shutdownSignals: [],
    logger: new DefaultLogger('INFO', (entry) =>
      log[LEVELS[entry.level]]({ ...entry.meta, component: componentOf(entry.meta) }, entry.message),
    ),
    telemetryOptions: {
      // `forward` hands Core's lines to the logger above instead of printing them to the console.
      logging: { filter: CORE_LOG_FILTER, forward: {} },
      ...(metrics && {
        metrics: { prometheus: { bindAddress: metrics.bindAddress, histogramBucketOverrides: HISTOGRAM_BUCKETS } },
      }),
    },
  };
}

let installedWith: { metrics?: string } | undefined;

/**
 * Installs the Runtime, once; later calls without metrics are no-ops. Asking for metrics after it
 * was installed without them (or elsewhere) is a programming error: the address must be known
 * before the first worker connection.
 */
export function installRuntime(options: { metrics?: MetricsAddress } = {}): void {
  const wanted = options.metrics?.bindAddress;
  if (installedWith) {
    if (wanted !== undefined && installedWith.metrics !== wanted) {
      throw new Error(
        `the Temporal runtime is already installed ${installedWith.metrics ? `with metrics on ${installedWith.metrics}` : 'without metrics'}`,
      );
    }
    return;
  }
  try {
    Runtime.install(runtimeOptions(options.metrics));
  } catch (error) {
    if (wanted === undefined) throw error;
    // The exporter binds while the Runtime is made: "Address already in use", "Permission denied".
    throw new MetricsAddressError(`cannot serve metrics on ${wanted}: ${(error as Error).message}`);
  }
  installedWith = { metrics: wanted };
  if (options.metrics) log.info({ component: 'metrics', address: wanted }, `Prometheus metrics on ${options.metrics.description}`);
}
