// Real S3-compatible servers for tests, each built from source into the tool cache by its script:
// MinIO (scripts/s3-server.sh) and Versity's S3 gateway with its POSIX backend (scripts/versitygw.sh).
// Each starts on 127.0.0.1, a free port, a temporary data directory and random credentials. No S3
// mock anywhere. The S3 tests run against every kind in s3ServerKinds().
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Transform } from 'node:stream';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';

export type S3ServerKind = 'minio' | 'versitygw';
export const S3_SERVER_KINDS: readonly S3ServerKind[] = ['minio', 'versitygw'];

/**
 * The servers the S3 tests run against: all of them, or those named in REELFLOW_S3_SERVERS
 * (comma-separated, e.g. `minio`) to narrow a local run.
 */
export function s3ServerKinds(): S3ServerKind[] {
  const named = process.env.REELFLOW_S3_SERVERS?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!named?.length) return [...S3_SERVER_KINDS];
  const unknown = named.filter((n) => !S3_SERVER_KINDS.includes(n as S3ServerKind));
  if (unknown.length)
    throw new Error(`REELFLOW_S3_SERVERS names unknown servers ${unknown.join(', ')} (known: ${S3_SERVER_KINDS.join(', ')})`);
  return named as S3ServerKind[];
}

export interface S3TestServer {
  kind: S3ServerKind;
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** The server's process id, so benchmarks can account for its CPU time. */
  pid: number | undefined;
  stop(): Promise<void>;
  createBucket(name: string): Promise<void>;
  /** The variables a reelflow process needs to reach this server (the AWS SDK's own names). */
  env: NodeJS.ProcessEnv;
  /** A client of this server; the caller destroys it. */
  client(): S3Client;
}

const REPO = resolve(__dirname, '..', '..');
const READY_TIMEOUT_MS = 60_000;

interface ServerRecipe {
  script: string;
  /** Variable that names a prebuilt binary instead of the script's. */
  binaryEnv: string;
  args(dataDir: string, port: number, consolePort: number, options: S3ServerOptions): string[];
  env(accessKeyId: string, secretAccessKey: string, region: string, home: string): NodeJS.ProcessEnv;
  /** Whether the server answers requests yet. */
  ready(endpoint: string): Promise<boolean>;
}

const RECIPES: Record<S3ServerKind, ServerRecipe> = {
  minio: {
    script: 's3-server.sh',
    binaryEnv: 'REELFLOW_S3_SERVER_BIN',
    args: (dataDir, port, consolePort, options) => [
      'server',
      dataDir,
      '--address',
      `127.0.0.1:${port}`,
      '--console-address',
      `127.0.0.1:${consolePort}`,
      '--quiet',
      ...(options.md5ETags === false ? ['--no-compat'] : []),
    ],
    env: (accessKeyId, secretAccessKey, region, home) => ({
      HOME: home,
      MINIO_ROOT_USER: accessKeyId,
      MINIO_ROOT_PASSWORD: secretAccessKey,
      MINIO_BROWSER: 'off',
      MINIO_UPDATE: 'off',
      MINIO_REGION: region,
      MINIO_CI_CD: 'on',
    }),
    ready: async (endpoint) => (await fetch(`${endpoint}/minio/health/ready`, { signal: AbortSignal.timeout(1000) })).ok,
  },
  versitygw: {
    script: 'versitygw.sh',
    binaryEnv: 'REELFLOW_VERSITYGW_BIN',
    // The POSIX backend: buckets are directories, objects files, metadata extended attributes.
    args: (dataDir, port) => ['--port', `127.0.0.1:${port}`, '--quiet', 'posix', dataDir],
    // Credentials by environment, never in arguments (any user can read those in the process list).
    env: (accessKeyId, secretAccessKey, region, home) => ({
      HOME: home,
      ROOT_ACCESS_KEY: accessKeyId,
      ROOT_SECRET_KEY: secretAccessKey,
      VGW_REGION: region,
    }),
    // It has no health endpoint: any S3 answer (403 for an anonymous request) means it serves.
    ready: async (endpoint) => (await fetch(`${endpoint}/`, { signal: AbortSignal.timeout(1000) })).headers.has('server'),
  },
};

/** The server binary: from its environment variable, else the project's script (builds it on first use). */
export async function s3ServerBinary(kind: S3ServerKind = 'minio'): Promise<string> {
  const recipe = RECIPES[kind];
  const fromEnv = process.env[recipe.binaryEnv];
  if (fromEnv) return fromEnv;
  try {
    const { stdout } = await promisify(execFile)('bash', [join(REPO, 'scripts', recipe.script), '--print-path'], {
      maxBuffer: 1 << 20,
      timeout: 30 * 60_000,
    });
    return stdout.trim();
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`cannot provision the ${kind} S3 test server (scripts/${recipe.script} --print-path): ${stderr.trim() || String(err)}`);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export interface S3ServerOptions {
  /** Which server (default MinIO). */
  kind?: S3ServerKind;
  /**
   * Settings for benchmarks. On one small machine the co-located server competes for the CPU with
   * the client being measured, so a benchmark turns off server work a real S3 does on its own
   * machines. Tests keep MinIO's defaults.
   *
   * false: MinIO's `--no-compat`, so it skips the MD5 it computes over every object for its ETag
   * (about 1.4 CPU-s per GiB here, as much as the writer's own sha256); ETags are then opaque
   * (still unique per write). Default true: S3's MD5 ETags.
   */
  md5ETags?: boolean;
}

export async function startS3Server(options: S3ServerOptions = {}): Promise<S3TestServer> {
  const kind = options.kind ?? 'minio';
  const recipe = RECIPES[kind];
  const binary = await s3ServerBinary(kind);
  const home = await mkdtemp(join(tmpdir(), `reelflow-s3-${kind}-`));
  const dataDir = join(home, 'data');
  await mkdir(dataDir);
  const accessKeyId = `rf${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(18).toString('base64url');
  const region = 'us-east-1';
  let lastError: unknown;
  // A port found free can be taken before the server binds it: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const consolePort = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const child = spawn(binary, recipe.args(dataDir, port, consolePort, options), {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...recipe.env(accessKeyId, secretAccessKey, region, home) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    try {
      await waitReady(kind, endpoint, child, recipe, () => output);
    } catch (err) {
      lastError = err;
      await stopChild(child);
      continue;
    }
    const admin = new S3Client({ region, endpoint, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
    return {
      kind,
      endpoint,
      accessKeyId,
      secretAccessKey,
      region,
      pid: child.pid,
      env: {
        AWS_ACCESS_KEY_ID: accessKeyId,
        AWS_SECRET_ACCESS_KEY: secretAccessKey,
        AWS_REGION: region,
        AWS_EC2_METADATA_DISABLED: 'true',
      },
      client: () => new S3Client({ region, endpoint, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } }),
      async createBucket(name: string) {
        await admin.send(new CreateBucketCommand({ Bucket: name }));
      },
      async stop() {
        admin.destroy();
        await stopChild(child);
        await rm(home, { recursive: true, force: true });
      },
    };
  }
  await rm(home, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

async function waitReady(
  kind: S3ServerKind,
  endpoint: string,
  child: ChildProcess,
  recipe: ServerRecipe,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited || child.exitCode !== null) {
      throw new Error(`the ${kind} S3 test server exited during start-up (code ${child.exitCode}): ${output().trim()}`);
    }
    try {
      if (await recipe.ready(endpoint)) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the ${kind} S3 test server at ${endpoint} was not ready within ${READY_TIMEOUT_MS / 1000}s: ${output().trim()}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** One request as it passed through an S3TrafficRecorder. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/renders/job/001.mp4?partNumber=1&uploadId=…`. */
  url: string;
  headers: IncomingHttpHeaders;
}

export interface S3TrafficRecorder {
  /** Point a client here instead of at the server. */
  endpoint: string;
  requests: RecordedRequest[];
  /** Flips one byte of the body of the next request that `matches`, on its way to the server. */
  corruptNext(matches: (request: RecordedRequest) => boolean): void;
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy in front of an S3 server that records every request's method, URL and
 * headers, and can corrupt a body in transit. Requests go on unchanged (the Host header included,
 * so SigV4 signatures still verify), so the server sees what the client sent.
 */
export async function startS3TrafficRecorder(target: string): Promise<S3TrafficRecorder> {
  const upstream = new URL(target);
  const requests: RecordedRequest[] = [];
  let corrupt: ((request: RecordedRequest) => boolean) | undefined;
  const server = createHttpServer((req, res) => {
    const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } };
    requests.push(recorded);
    const flip = corrupt?.(recorded) ?? false;
    if (flip) corrupt = undefined;
    const out = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.on('error', () => out.destroy());
    (flip ? req.pipe(flipFirstByte()) : req).pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    corruptNext(matches) {
      corrupt = matches;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function flipFirstByte(): Transform {
  let flipped = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (!flipped && chunk.length > 0) {
        chunk = Buffer.from(chunk);
        chunk[0] = (chunk[0] as number) ^ 0xff;
        flipped = true;
      }
      done(null, chunk);
    },
  });
}
