// Where Temporal comes from (spec/cli.md): TEMPORAL_ADDRESS and Temporal's standard environment
// configuration point at a real service and nothing is started; otherwise the embedded server.
import { Client, Connection } from '@temporalio/client';
import { loadClientConfig, loadClientConnectConfig } from '@temporalio/envconfig';
import { DefaultLogger, NativeConnection, Runtime, type LogLevel } from '@temporalio/worker';
import { ensureDevServer, type DevServer } from './dev-server';
import { TemporalUnavailableError } from './errors';
import { log } from './log';
import { stateDirectory } from './state-dir';

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
    const address = config.connectionOptions.address ?? env.TEMPORAL_ADDRESS ?? 'localhost:7233';
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

async function withConnectRetries<T>(target: TemporalTarget, connect: () => Promise<T>): Promise<T> {
  // The dev server accepts TCP before its frontend serves; give it a short, bounded grace.
  const deadline = Date.now() + (target.embedded ? 30_000 : 10_000);
  for (;;) {
    try {
      return await connect();
    } catch (error) {
      if (Date.now() > deadline) {
        throw new TemporalUnavailableError(
          `cannot reach ${target.description}: ${(error as Error).message}. ` +
            'Check TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE, TLS, API key), or unset it to use the embedded server.',
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export async function connectClient(target: TemporalTarget): Promise<Client> {
  const { address, tls, apiKey, metadata } = target.connectionOptions;
  const connection = await withConnectRetries(target, () => Connection.connect({ address, tls, apiKey, metadata, connectTimeout: 5_000 }));
  return new Client({ connection, namespace: target.namespace });
}

let runtimeInstalled = false;

/** The SDK logs into our log file (and stderr only with --verbose), not onto the user's terminal. */
function installRuntimeLogging(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const levels: Record<LogLevel, 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'debug',
    DEBUG: 'debug',
    INFO: 'info',
    WARN: 'warn',
    ERROR: 'error',
  };
  Runtime.install({
    logger: new DefaultLogger('INFO', (entry) => log[levels[entry.level]]({ ...entry.meta, component: 'temporal-sdk' }, entry.message)),
  });
}

export function connectWorker(target: TemporalTarget): Promise<NativeConnection> {
  installRuntimeLogging();
  return withConnectRetries(target, () => NativeConnection.connect(target.connectionOptions));
}
