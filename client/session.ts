// A command's connection to Temporal: the configured service, or the embedded development server
// (started or reused), plus optionally a worker in this process, with its metrics and log format.
import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { Option, type Command } from 'commander';
import { MetricsAddressError } from '../worker/errors';
import { configureLog, LOG_FORMATS, LOG_LEVELS, type LogFormat } from '../worker/log';
import { parseMetricsAddress, type MetricsAddress } from '../worker/metrics-address';
import { serveWorkerEndpoints } from '../worker/health';
import { connectClient, connectWorker, resolveTemporal, type TemporalTarget } from '../worker/temporal';
import type { OwnedJob } from '../worker/owned-job';
import { UsageError } from './errors';
import { TASK_QUEUE } from './task-queue';

/** `--metrics` and `--log-format`, for the commands that run a worker (worker, run). */
export interface Observability {
  metrics?: string;
  logFormat?: LogFormat;
}

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

/**
 * Applies --log-format, and --metrics by serving /metrics, /healthz and /readyz there (the SDK's Runtime
 * and its exporter installed with them): both must come before anything logs or connects. Returns
 * where metrics are served.
 */
export async function startObservability(options: Observability): Promise<MetricsAddress | undefined> {
  configureLog({ format: options.logFormat ?? 'file' });
  if (options.metrics === undefined) return undefined;
  try {
    const address = parseMetricsAddress(options.metrics);
    await serveWorkerEndpoints(address);
    return address;
  } catch (error) {
    throw error instanceof MetricsAddressError ? new UsageError(error.message) : error;
  }
}

export interface Session {
  client: Client;
  target: TemporalTarget;
  worker?: Worker;
  /** Stops the worker (gracefully), closes the client, stops an embedded server this process owns. */
  close(options?: { keepServer?: boolean }): Promise<void>;
}

export interface SessionOptions extends Observability {
  worker?: boolean;
  /**
   * The queue this command's worker polls, chosen once connected (default: the shared queue);
   * undefined: this command runs no worker after all (the job it attaches to is carried elsewhere).
   */
  workerTaskQueue?: (client: Client) => Promise<string | undefined>;
  /** The one job this command's worker carries (worker/owned-job.ts), asked once its queue is chosen. */
  ownedJob?: () => OwnedJob | undefined;
}

export async function openSession(options: SessionOptions = {}): Promise<Session> {
  if (options.metrics !== undefined && !options.worker) {
    throw new UsageError(
      '--metrics serves the metrics of the worker this command runs, and with --no-worker or --detach it runs none: ' +
        'give --metrics to `reelflow worker`',
    );
  }
  const metrics = await startObservability(options);
  if (metrics) process.stderr.write(`metrics: Prometheus on ${metrics.description}\n`);
  const target = await resolveTemporal();
  let client: Client | undefined;
  try {
    client = await connectClient(target);
    let worker: Worker | undefined;
    let workerDone: Promise<void> | undefined;
    let releaseWorker: () => void = () => {};
    const taskQueue = options.worker ? await (options.workerTaskQueue?.(client) ?? TASK_QUEUE) : undefined;
    if (taskQueue) {
      const connection = await connectWorker(target);
      const { createReelflowWorker, runWorkerUntil } = await import('../worker/worker.js');
      const ownedJob = options.ownedJob?.();
      worker = await createReelflowWorker({ connection, namespace: target.namespace, taskQueue, ...(ownedJob ? { ownedJob } : {}) });
      const stop = new Promise<void>((resolve) => {
        releaseWorker = resolve;
      });
      workerDone = runWorkerUntil(worker, stop).finally(() => connection.close());
    }
    const connected = client;
    return {
      client: connected,
      target,
      worker,
      async close(closeOptions = {}) {
        releaseWorker();
        await workerDone?.catch(() => undefined);
        await connected.connection.close().catch(() => undefined);
        if (!closeOptions.keepServer) await target.embedded?.stop();
      },
    };
  } catch (error) {
    await client?.connection.close().catch(() => undefined);
    await target.embedded?.stop();
    throw error;
  }
}
