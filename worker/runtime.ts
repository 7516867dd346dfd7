// The Temporal SDK's Runtime: one per process, installed before the first worker connection, and
// it cannot be changed afterwards, so its logging and its metrics are set in the one call.
// - Logs: the SDK's TypeScript side and Core (its Rust side) both go to our logger (the log file,
//   stderr only with --verbose, or stdout with --log-format json). Left alone, Core prints its
//   warnings (e.g. TMPRL1104 "Workflow task duration exceeded") straight onto the user's terminal.
// - Metrics: with --metrics, a Prometheus exporter serves the SDK's `temporal_*` metrics and
//   reelflow's `reelflow_*` ones (activities/metrics.ts) on /metrics.
// - Outages: Core retries its polls while Temporal is unreachable and says so several times a
//   second; those lines become one when the outage starts, a count every OUTAGE_REPORT_MS while it
//   lasts and one when it ends (docs/logs.md), the end found by asking the server (watchTemporal).
import { ApplicationFailure } from '@temporalio/common';
import {
  DefaultLogger,
  makeTelemetryFilterString,
  Runtime,
  type LogEntry,
  type LogLevel,
  type NativeConnection,
  type RuntimeOptions,
} from '@temporalio/worker';
import { bounded, LogEvent } from '../activities/log-events';
import { GatewayAbortedError } from '../gateway/errors';
import { HISTOGRAM_BUCKETS } from '../activities/metrics';
import { OUTAGE_REPORT_MS, OutageLog, RepeatedLines } from '../activities/outage-log';
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

/** How often the server is asked, during an outage, whether it answers again. */
const OUTAGE_PROBE_MS = 2_000;

/** Core's line about a call that could not reach the server (a poll retried, a transport error). */
export function isConnectionTrouble(entry: Pick<LogEntry, 'message' | 'meta'>): boolean {
  if (entry.meta?.sdkComponent !== 'core') return false;
  const text = `${entry.message} ${String(entry.meta?.error ?? '')}`;
  return /Unavailable|transport|tcp connect|connection (refused|reset)|dns error/i.test(text);
}

/** Temporal's outage as the worker sees it: Core's failing calls, ended when the server answers again. */
class TemporalOutage {
  private readonly outage = new OutageLog({
    everyMs: OUTAGE_REPORT_MS,
    emit: ({ phase, failures, seconds, reason }) => {
      if (phase === 'started') {
        log.warn({ event: LogEvent.temporalOutageStarted, component: 'temporal-core', reason }, 'Temporal is unreachable; retrying');
      } else if (phase === 'continues') {
        log.warn(
          { event: LogEvent.temporalOutageContinues, component: 'temporal-core', failures, seconds },
          `Temporal still unreachable after ${seconds} s`,
        );
      } else {
        log.info(
          { event: LogEvent.temporalOutageEnded, component: 'temporal-core', failures, seconds },
          `Temporal reachable again after ${seconds} s`,
        );
      }
    },
  });
  private probe: (() => Promise<unknown>) | undefined;
  private timer: NodeJS.Timeout | undefined;

  watch(probe: () => Promise<unknown>): void {
    this.probe = probe;
  }

  failed(entry: LogEntry): void {
    const first = !this.outage.open;
    this.outage.failed(bounded(String(entry.meta?.error ?? entry.message)));
    if (first) this.timer ??= setInterval(() => void this.ask(), OUTAGE_PROBE_MS).unref();
  }

  private async ask(): Promise<void> {
    if (!this.probe) return;
    try {
      await this.probe();
    } catch {
      return; // still down: Core's next failure counts it
    }
    this.outage.recovered();
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

const temporalOutage = new TemporalOutage();

/**
 * The worker's connection: during an outage it is asked for the server's system info (a short
 * deadline) to learn when Temporal answers again.
 */
export function watchTemporal(connection: NativeConnection): void {
  temporalOutage.watch(() => connection.withDeadline(Date.now() + 1_500, () => connection.workflowService.getSystemInfo({})));
}

/**
 * A failed activity attempt that Temporal will retry says nothing an operator acts on: the item's
 * end (item.ended) or the outage lines do. Nor does one that ended because its own timeout or a
 * cancel aborted its call (`aborted`, gateway/errors.ts): Temporal has recorded that already, and a
 * quick status check cut at its deadline is made again as a regular activity (workflows/render.ts).
 * Both are logged at debug; any other failure stays a warning.
 */
function isRetriedActivityFailure(entry: LogEntry): boolean {
  // Local activities' lines come from the SDK's worker, the others' from the activity.
  if (entry.message !== 'Activity failed' || entry.meta?.sdkComponent === 'core') return false;
  const error = entry.meta?.error;
  return error instanceof ApplicationFailure && (!error.nonRetryable || error.type === ABORTED);
}

/** The failure type of a call its activity's cancellation signal aborted (GatewayAbortedError's kind). */
const ABORTED = new GatewayAbortedError().kind;

/**
 * One SDK or Core line into the log: outages summarised, retried attempts at debug, a Core warning
 * repeated within OUTAGE_REPORT_MS at debug, no task token.
 */
function forward(entry: LogEntry): void {
  // An activity's task token completes the activity for whoever holds it: not for a log reader.
  const { taskToken: _token, ...meta } = entry.meta ?? {};
  const fields = { ...meta, component: componentOf(entry.meta) };
  if (isConnectionTrouble(entry)) {
    temporalOutage.failed(entry);
    log.debug(fields, entry.message);
    return;
  }
  const level = isRetriedActivityFailure(entry) ? 'debug' : LEVELS[entry.level];
  if (entry.meta?.sdkComponent === 'core' && (level === 'warn' || level === 'error')) {
    const { write, repeated } = coreWarnings.admit(coreWarningKind(entry.message));
    if (!write) return log.debug(fields, entry.message);
    if (repeated > 0) return log[level]({ ...fields, repeated }, entry.message);
  }
  log[level](fields, entry.message);
}

/** Core's warnings of one kind (its TMPRL code, else its text) at most once per OUTAGE_REPORT_MS. */
const coreWarnings = new RepeatedLines(OUTAGE_REPORT_MS);

function coreWarningKind(message: string): string {
  return /\[(TMPRL\d+)\]/.exec(message)?.[1] ?? message.slice(0, 120);
}

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
    // Every level reaches our logger, which writes what --log-level asks for (worker/log.ts).
    logger: new DefaultLogger('DEBUG', forward),
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
