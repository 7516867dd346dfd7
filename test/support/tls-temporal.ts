// A real Temporal server that only speaks TLS and checks API keys, for the tests of connections to a
// configured cluster. The development server (`temporal server start-dev`, CLI v1.5.1) has no TLS
// option at all: its configuration is built in code with the frontend in plain text. So this starts
// the Temporal server itself (go.temporal.io/server v1.29.1, the version that CLI embeds, built once
// with Go into the tool cache) with an in-memory SQLite store and a configuration file of our own:
// - frontend TLS with a certificate for localhost / 127.0.0.1 signed by a CA this module makes
//   (openssl), plus a second, unrelated CA for the wrong-CA cases;
// - API keys checked for real: the server's JWT claim mapper and default authorizer, with the
//   signing key served as JWKS from this process on loopback. An API key is a JWT whose
//   `permissions` say which namespaces it may use, so a key that is not sent, or not the right one,
//   is refused by the server, not merely ignored;
// - the system worker on an internal frontend (plain, loopback), so it needs no key;
// - one namespace other than `default` (and no `default` namespace at all).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { freePort } from '../../worker/dev-server';

const run = promisify(execFile);

export interface TlsTemporal {
  /** 127.0.0.1:PORT, TLS only. */
  address: string;
  namespace: string;
  /** The CA that signed the server's certificate. */
  caPath: string;
  /** A CA that signed nothing the server uses. */
  wrongCaPath: string;
  /** An API key (a JWT) that may read and write `namespace`, and nothing else. */
  apiKey: string;
  /** An API key signed by the server's key source, for other permissions (`NAMESPACE:ROLE`, ROLE one of read, write, worker, admin). */
  apiKeyFor(permissions: string[]): string;
  /** The server's log so far (for assertion messages). */
  log(): string;
  stop(): Promise<void>;
}

/** The Temporal server binary, provisioned by scripts/temporal-server.sh (built with Go on first use). */
export async function temporalServerBinary(): Promise<string> {
  const script = join(__dirname, '..', '..', 'scripts', 'temporal-server.sh');
  try {
    const { stdout } = await run('bash', [script, '--print-path'], { timeout: 30 * 60_000, maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim();
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`cannot provision the Temporal server (scripts/temporal-server.sh --print-path): ${stderr.trim() || String(error)}`);
  }
}

/** A CA, a server certificate it signs for localhost and 127.0.0.1, and an unrelated CA. */
async function makeCertificates(dir: string): Promise<{ ca: string; wrongCa: string; cert: string; key: string }> {
  const path = (name: string) => join(dir, name);
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const ca = ['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'];
  for (const name of ['ca', 'wrong-ca']) {
    await run('openssl', [
      'req',
      '-x509',
      ...ecKey,
      '-keyout',
      path(`${name}.key`),
      '-out',
      path(`${name}.pem`),
      '-days',
      '2',
      ...ca,
      '-subj',
      `/CN=reelflow test ${name}`,
    ]);
  }
  await run('openssl', ['req', ...ecKey, '-keyout', path('server.key'), '-out', path('server.csr'), '-subj', '/CN=localhost']);
  writeFileSync(
    path('server.ext'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n',
  );
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    path('server.csr'),
    '-CA',
    path('ca.pem'),
    '-CAkey',
    path('ca.key'),
    '-CAcreateserial',
    '-out',
    path('server.pem'),
    '-days',
    '2',
    '-extfile',
    path('server.ext'),
  ]);
  return { ca: path('ca.pem'), wrongCa: path('wrong-ca.pem'), cert: path('server.pem'), key: path('server.key') };
}

/** The key API keys are signed with, served as JWKS on loopback for the server's claim mapper. */
async function startKeySource(): Promise<{ url: string; server: Server; token(permissions: string[]): string }> {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = 'reelflow-test';
  const jwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' }] });
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(jwks);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/jwks.json`, server, token: (permissions) => jwt(privateKey, kid, permissions) };
}

function jwt(key: KeyObject, kid: string, permissions: string[]): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = { sub: 'reelflow-test', permissions, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 6 * 3600 };
  const body = `${part({ alg: 'ES256', typ: 'JWT', kid })}.${part(claims)}`;
  return `${body}.${sign('sha256', Buffer.from(body), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

interface Ports {
  frontend: number;
  [service: string]: number;
}

const SERVICES = ['frontend', 'internal-frontend', 'history', 'matching', 'worker'];

function sqlite(): object {
  return {
    sql: {
      pluginName: 'sqlite',
      databaseName: 'default',
      connectAddr: 'localhost',
      connectProtocol: 'tcp',
      connectAttributes: { mode: 'memory', cache: 'private' },
      maxConns: 1,
      maxIdleConns: 1,
      maxConnLifetime: '1h',
    },
  };
}

// JSON is YAML: the server reads this file as its `development` environment.
function serverConfig(ports: Ports, tls: { cert: string; key: string }, keySourceUrl: string, dynamicConfig: string): string {
  const services = Object.fromEntries(
    SERVICES.map((name) => [name, { rpc: { grpcPort: ports[name], membershipPort: ports[`${name}-membership`], bindOnLocalHost: true } }]),
  );
  return JSON.stringify(
    {
      log: { stdout: true, level: 'warn' },
      persistence: {
        defaultStore: 'sqlite-default',
        visibilityStore: 'sqlite-visibility',
        numHistoryShards: 1,
        datastores: { 'sqlite-default': sqlite(), 'sqlite-visibility': sqlite() },
      },
      global: {
        membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
        tls: { frontend: { server: { certFile: tls.cert, keyFile: tls.key, requireClientAuth: false } } },
        authorization: {
          jwtKeyProvider: { keySourceURIs: [keySourceUrl], refreshInterval: '1h' },
          permissionsClaimName: 'permissions',
          authorizer: 'default',
          claimMapper: 'default',
        },
      },
      services,
      clusterMetadata: {
        enableGlobalNamespace: false,
        failoverVersionIncrement: 10,
        masterClusterName: 'active',
        currentClusterName: 'active',
        clusterInformation: {
          active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${ports.frontend}` },
        },
      },
      dcRedirectionPolicy: { policy: 'noop' },
      dynamicConfigClient: { filepath: dynamicConfig, pollInterval: '10s' },
    },
    null,
    2,
  );
}

// A namespace registered through the API is served once the frontend's namespace cache refreshes
// (10 s by default); 1 s keeps set-up short.
const DYNAMIC_CONFIG = 'system.namespaceCacheRefreshInterval:\n  - value: 1s\n';

async function allocatePorts(): Promise<Ports> {
  const ports: Record<string, number> = {};
  for (const name of SERVICES) {
    ports[name] = await freePort();
    ports[`${name}-membership`] = await freePort();
  }
  return ports as Ports;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function until<T>(what: string, timeoutMs: number, attempt: () => Promise<T>, describe: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: ${(error as Error).message}\n${describe()}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export async function startTlsTemporal(options: { namespace?: string } = {}): Promise<TlsTemporal> {
  const namespace = options.namespace ?? 'reelflow-tls';
  const binary = await temporalServerBinary();
  const dir = mkdtempSync(join(tmpdir(), 'reelflow-tls-temporal-'));
  const certs = await makeCertificates(dir);
  const keySource = await startKeySource();
  const ports = await allocatePorts();
  mkdirSync(join(dir, 'config'));
  writeFileSync(join(dir, 'dynamic-config.yaml'), DYNAMIC_CONFIG);
  writeFileSync(join(dir, 'config', 'development.yaml'), serverConfig(ports, certs, keySource.url, join(dir, 'dynamic-config.yaml')));
  const logPath = join(dir, 'server.log');
  const logFd = openSync(logPath, 'a');
  const child = spawn(
    binary,
    ['--root', dir, '--config', 'config', '--env', 'development', 'start', ...SERVICES.flatMap((s) => ['--service', s])],
    {
      stdio: ['ignore', logFd, logFd],
      detached: true,
    },
  );
  closeSync(logFd);
  // The server runs in its own process group: a test process that dies early must not leave it behind.
  // The test runner ends a file that outlives --test-timeout with SIGTERM, which skips 'exit'
  // (test/support/cli.ts re-raises it once its own children are gone).
  const killOnExit = (signal?: unknown) => {
    killGroup(child, 'SIGKILL');
    // A signal this listener alone caught still ends the process, as it would have without it.
    if ((signal === 'SIGTERM' || signal === 'SIGINT') && process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const exitEvents = ['exit', 'SIGTERM', 'SIGINT'] as const;
  for (const event of exitEvents) process.once(event, killOnExit);
  const log = () => (existsSync(logPath) ? readFileSync(logPath, 'utf8') : '');
  const tail = () => `server log (${logPath}), last lines:\n${log().split('\n').slice(-15).join('\n')}`;
  const address = `127.0.0.1:${ports.frontend}`;
  const tls = { serverRootCACertificate: readFileSync(certs.ca) };

  const stop = async () => {
    for (const event of exitEvents) process.off(event, killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await new Promise((resolve) => keySource.server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const admin = keySource.token(['temporal-system:admin']);
    const apiKey = keySource.token([`${namespace}:write`]);
    const connection = await until(
      `the TLS Temporal server at ${address} did not start`,
      90_000,
      async () => {
        if (child.exitCode !== null) throw new Error(`it exited with status ${child.exitCode}`);
        const c = await Connection.connect({ address, tls, apiKey: admin, connectTimeout: 2_000 });
        await c.workflowService.getClusterInfo({});
        return c;
      },
      tail,
    );
    try {
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs('1 day'),
      });
      // Served (not only stored) once the frontend's namespace cache has it, with the namespace's own key.
      const user = await Connection.connect({ address, tls, apiKey });
      try {
        await until(
          `namespace ${namespace} was not served`,
          30_000,
          () => user.workflowService.countWorkflowExecutions({ namespace }),
          tail,
        );
      } finally {
        await user.close();
      }
    } finally {
      await connection.close();
    }
    return {
      address,
      namespace,
      caPath: certs.ca,
      wrongCaPath: certs.wrongCa,
      apiKey,
      apiKeyFor: (permissions) => keySource.token(permissions),
      log,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
