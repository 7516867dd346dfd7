// Where Temporal comes from (docs/deploy.md): TEMPORAL_ADDRESS and Temporal's standard environment
// configuration point at a real service and nothing is started; otherwise the embedded server.
import { Client, Connection, type ConnectionLike } from '@temporalio/client';
import { loadClientConfig, loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnection } from '@temporalio/worker';
import { ensureDevServer, TEMPORAL_PORT, type DevServer } from './dev-server';
import { TemporalUnavailableError } from './errors';
import { dropIpServerNameWarning } from './ip-server-name-warning';
import { stateDirectory } from './state-dir';
import { diagnoseHandshake, diagnoseNamespaceError, diagnoseTls, type Diagnosis } from './temporal-diagnosis';

export interface TemporalTarget {
  address: string;
  namespace: string;
  /** Options for both client and worker connections (TLS, API key, metadata from envconfig). */
  connectionOptions: ReturnType<typeof loadClientConnectConfig>['connectionOptions'];
  embedded?: DevServer;
  /** What was tried, for error messages. */
  description: string;
}

/**
 * TEMPORAL_ADDRESS or Temporal's own configuration names a service: nothing is started then. As for
 * the Temporal CLI and SDKs, a `default` profile in the configuration file (on Linux
 * `$XDG_CONFIG_HOME/temporalio/temporal.toml`, else `~/.config/temporalio/temporal.toml`) is enough.
 */
export function usesExternalService(env: NodeJS.ProcessEnv): boolean {
  if (env.TEMPORAL_ADDRESS || env.TEMPORAL_PROFILE || env.TEMPORAL_CONFIG_FILE) return true;
  try {
    return 'default' in loadClientConfig({ overrideEnvVars: env as Record<string, string> }).profiles;
  } catch {
    return true; // an unreadable configuration file is reported when connecting, not ignored
  }
}

/** Resolves the Temporal service, starting (or reusing) the embedded server when none is configured. */
export async function resolveTemporal(options: { startEmbedded?: boolean } = {}): Promise<TemporalTarget> {
  const env = process.env;
  if (usesExternalService(env)) {
    const config = loadClientConnectConfig();
    const address = config.connectionOptions.address ?? env.TEMPORAL_ADDRESS ?? `localhost:${TEMPORAL_PORT}`;
    return {
      address,
      namespace: config.namespace ?? 'default',
      connectionOptions: { ...config.connectionOptions, address },
      description: `the Temporal service at ${address} (from TEMPORAL_ADDRESS / Temporal's environment configuration or temporal.toml)`,
    };
  }
  const stateDir = stateDirectory(env);
  if (options.startEmbedded === false) {
    throw new TemporalUnavailableError('no Temporal service configured: set TEMPORAL_ADDRESS, or run `reelflow server`');
  }
  const server = await ensureDevServer({ stateDir });
  return {
    address: server.address,
    namespace: 'default',
    connectionOptions: { address: server.address },
    embedded: server,
    description: `the embedded Temporal development server at ${server.address} (state in ${stateDir})`,
  };
}

type Connected = Pick<ConnectionLike, 'workflowService' | 'withDeadline' | 'close'>;

const closeQuietly = (connection: Connected) => connection.close().catch(() => undefined);

/**
 * Connects, then asks for the namespace, so that a refused API key or a missing namespace is said
 * here, not by the first call that needs it ("Failed to start Workflow", or a worker that never
 * exits). What no retry can fix (a certificate, a refused key, TLS on one side only) ends at once,
 * in words (temporal-diagnosis.ts); anything else is retried for a short, bounded while.
 */
async function withConnectRetries<T extends Connected>(
  target: TemporalTarget,
  connect: () => Promise<T>,
  options: { handshakeFirst?: boolean } = {},
): Promise<T> {
  // The dev server accepts TCP before its frontend serves; give it a short, bounded grace.
  const deadline = Date.now() + (target.embedded ? 30_000 : 10_000);
  const { address, namespace } = target;
  const { tls, apiKey } = target.connectionOptions;
  const final = (diagnosis: Diagnosis) => new TemporalUnavailableError(`cannot use ${target.description}: ${diagnosis.problem}.`);
  // With a CA given, the SDK trusts exactly that CA, so a handshake of our own (a few milliseconds)
  // gives its verdict first. For the client only: grpc-js waits out its whole connect timeout on a
  // certificate it refuses and holds the process open until then. Core (the worker's connection)
  // fails at once, and its failure lets the SDK's Runtime shut down: a check of ours before it would
  // leave the Runtime up and the worker process would never exit.
  if (options.handshakeFirst && !target.embedded && typeof tls === 'object' && tls?.serverRootCACertificate) {
    const diagnosis = await diagnoseTls(address, tls);
    if (diagnosis?.final) throw final(diagnosis);
  }
  // A connection made is kept while the namespace call is retried: closing a worker's connection
  // shuts the SDK's Runtime down (with its metrics endpoint) when nothing else uses it.
  let connection: T | undefined;
  for (;;) {
    try {
      connection ??= await connect();
      const connected = connection;
      await connected.withDeadline(Date.now() + 5_000, () => connected.workflowService.describeNamespace({ namespace }));
      return connected;
    } catch (error) {
      const diagnosis = connection
        ? diagnoseNamespaceError(address, namespace, apiKey, error)
        : target.embedded
          ? undefined
          : await diagnoseHandshake(address, tls);
      if (connection && (diagnosis?.final || Date.now() > deadline)) await closeQuietly(connection);
      if (diagnosis?.final) throw final(diagnosis);
      if (Date.now() > deadline) {
        throw new TemporalUnavailableError(
          `cannot reach ${target.description}: ${diagnosis?.problem ?? (error as Error).message}. ` +
            'Check TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE, TLS, API key), or unset it to use the embedded server.',
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export async function connectClient(target: TemporalTarget): Promise<Client> {
  const { address, tls, apiKey, metadata } = target.connectionOptions;
  if (tls) dropIpServerNameWarning();
  const connection = await withConnectRetries(target, () => Connection.connect({ address, tls, apiKey, metadata, connectTimeout: 5_000 }), {
    handshakeFirst: true,
  });
  return new Client({ connection, namespace: target.namespace });
}

/** A worker's connection. The SDK's Runtime (logs, metrics) is installed first, if the command has not already. */
export async function connectWorker(target: TemporalTarget): Promise<NativeConnection> {
  // The worker's SDK (about 0.8 s of loading) only where a worker runs: status, results, validate go without.
  const [{ NativeConnection }, { installRuntime, watchTemporal }] = await Promise.all([
    import('@temporalio/worker'),
    import('./runtime.js'),
  ]);
  installRuntime();
  const connection = await withConnectRetries(target, () => NativeConnection.connect(target.connectionOptions));
  watchTemporal(connection); // an outage's end is learnt by asking it (docs/logs.md)
  return connection;
}
