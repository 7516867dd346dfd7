// The Temporal check of `reelflow doctor`: the configured service answers (and its namespace exists),
// or, with nothing configured, the embedded development server is running or can be started.
// Nothing is started here.
import { Connection } from '@temporalio/client';
import { recordedServer, temporalCliPath } from '../../worker/dev-server';
import { TemporalUnavailableError } from '../../worker/errors';
import { dropIpServerNameWarning } from '../../worker/ip-server-name-warning';
import { stateDirectory } from '../../worker/state-dir';
import { diagnoseHandshake, diagnoseNamespaceError, diagnoseTls } from '../../worker/temporal-diagnosis';
import { resolveTemporal, usesExternalService, type TemporalTarget } from '../../worker/temporal';
import { TASK_QUEUE } from '../task-queue';
import { type Check, fail, ok, PROBE_TIMEOUT_MS, withTimeout } from './check';

const NAME = 'temporal';
const WORKFLOW_TASK_QUEUE = 1; // temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW

type Options = TemporalTarget['connectionOptions'];

/** Connects, reads the namespace and the pollers of the task queue; a sentence, or throws. */
async function probe(address: string, namespace: string, options: Options): Promise<string> {
  const started = Date.now();
  const { tls, apiKey, metadata } = options;
  if (tls) dropIpServerNameWarning();
  const connection = await Connection.connect({ address, tls, apiKey, metadata, connectTimeout: PROBE_TIMEOUT_MS });
  try {
    await connection.workflowService.describeNamespace({ namespace }).catch((error: unknown) => {
      const refused = diagnoseNamespaceError(address, namespace, apiKey, error);
      throw refused ? new TemporalUnavailableError(refused.problem) : error;
    });
    const ms = Date.now() - started;
    const queue = await connection.workflowService
      .describeTaskQueue({
        namespace,
        taskQueue: { name: TASK_QUEUE },
        taskQueueType: WORKFLOW_TASK_QUEUE,
      })
      .catch(() => undefined);
    const pollers = queue?.pollers?.length ?? 0;
    const workers =
      pollers > 0 ? `${pollers} worker poller(s) on task queue "${TASK_QUEUE}"` : `no worker polls task queue "${TASK_QUEUE}" right now`;
    return `answers in ${ms} ms, namespace "${namespace}" exists; ${workers}`;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

async function bounded(address: string, namespace: string, options: Options): Promise<string> {
  return withTimeout(PROBE_TIMEOUT_MS + 1_000, probe(address, namespace, options));
}

function embeddedPort(stateDir: string): number | undefined {
  return recordedServer(stateDir)?.port;
}

export async function checkTemporal(): Promise<Check> {
  const env = process.env;
  if (usesExternalService(env)) {
    let target: TemporalTarget;
    try {
      target = await resolveTemporal({ startEmbedded: false });
    } catch (error) {
      return fail(NAME, `Temporal's environment configuration cannot be read: ${(error as Error).message}`);
    }
    const { address, namespace, connectionOptions } = target;
    // A certificate the settings do not trust is named by a handshake of our own, at once: the SDK's
    // connect waits out its timeout, then says only "Failed to connect before the deadline".
    const handshake = connectionOptions.tls ? await diagnoseTls(address, connectionOptions.tls) : undefined;
    if (handshake?.final) return fail(NAME, `cannot use ${target.description}: ${handshake.problem}`);
    try {
      return ok(NAME, `${target.description}: ${await bounded(address, namespace, connectionOptions)}`);
    } catch (error) {
      const diagnosis =
        error instanceof TemporalUnavailableError
          ? { problem: error.message, final: true }
          : await diagnoseHandshake(address, connectionOptions.tls);
      if (diagnosis?.final) return fail(NAME, `cannot use ${target.description}: ${diagnosis.problem}`);
      return fail(
        NAME,
        `cannot reach ${target.description}: ${diagnosis?.problem ?? (error as Error).message}. Check TEMPORAL_ADDRESS ` +
          '(and TEMPORAL_NAMESPACE, TLS, API key) and that the service runs, or unset it to use the embedded server',
      );
    }
  }
  const stateDir = stateDirectory(env);
  const port = embeddedPort(stateDir);
  if (port !== undefined) {
    const address = `127.0.0.1:${port}`;
    try {
      return ok(
        NAME,
        `the embedded development server at ${address} (state in ${stateDir}) ${await bounded(address, 'default', { address })}`,
      );
    } catch {
      // Not running any more: whether one can be started is what matters.
    }
  }
  try {
    const cli = temporalCliPath(env);
    return ok(
      NAME,
      `TEMPORAL_ADDRESS is not set: commands start the embedded development server when needed ` +
        `(Temporal CLI ${cli}; state in ${stateDir})`,
    );
  } catch (error) {
    return fail(NAME, `TEMPORAL_ADDRESS is not set and the embedded server cannot be provided: ${(error as Error).message}`);
  }
}
