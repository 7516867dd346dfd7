// A real S3-compatible server for tests: MinIO (provisioned by scripts/s3-server.sh, built from
// source into the tool cache) on 127.0.0.1, a free port, a temporary data directory and random
// credentials. No S3 mock anywhere.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';

export interface S3TestServer {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** The server's process id, so benchmarks can account for its CPU time. */
  pid: number | undefined;
  stop(): Promise<void>;
  createBucket(name: string): Promise<void>;
}

const REPO = resolve(__dirname, '..', '..');
const READY_TIMEOUT_MS = 60_000;

/** The server binary: `REELFLOW_S3_SERVER_BIN`, else the project's script (builds it on first use). */
export async function s3ServerBinary(): Promise<string> {
  const fromEnv = process.env.REELFLOW_S3_SERVER_BIN;
  if (fromEnv) return fromEnv;
  try {
    const { stdout } = await promisify(execFile)('bash', [join(REPO, 'scripts', 's3-server.sh'), '--print-path'], {
      maxBuffer: 1 << 20,
      timeout: 30 * 60_000,
    });
    return stdout.trim();
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`cannot provision the S3 test server (scripts/s3-server.sh --print-path): ${stderr.trim() || String(err)}`);
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

/**
 * Settings for benchmarks. On one small machine the co-located server competes for the CPU with
 * the client being measured, so a benchmark turns off server work a real S3 does on its own
 * machines. Tests keep MinIO's defaults.
 */
export interface S3ServerOptions {
  /**
   * false: `--no-compat`, so MinIO skips the MD5 it computes over every object for its ETag
   * (about 1.4 CPU-s per GiB here, as much as the writer's own sha256); ETags are then opaque
   * (still unique per write). Default true: S3's MD5 ETags.
   */
  md5ETags?: boolean;
}

export async function startS3Server(options: S3ServerOptions = {}): Promise<S3TestServer> {
  const binary = await s3ServerBinary();
  const dataDir = await mkdtemp(join(tmpdir(), 'reelflow-s3-'));
  const accessKeyId = `rf${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(18).toString('base64url');
  const region = 'us-east-1';
  let lastError: unknown;
  // A port found free can be taken before the server binds it: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const consolePort = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const child = spawn(
      binary,
      [
        'server',
        join(dataDir, 'data'),
        '--address',
        `127.0.0.1:${port}`,
        '--console-address',
        `127.0.0.1:${consolePort}`,
        '--quiet',
        ...(options.md5ETags === false ? ['--no-compat'] : []),
      ],
      {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: dataDir,
          MINIO_ROOT_USER: accessKeyId,
          MINIO_ROOT_PASSWORD: secretAccessKey,
          MINIO_BROWSER: 'off',
          MINIO_UPDATE: 'off',
          MINIO_REGION: region,
          MINIO_CI_CD: 'on',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    try {
      await waitReady(endpoint, child, () => output);
    } catch (err) {
      lastError = err;
      await stopChild(child);
      continue;
    }
    const admin = new S3Client({ region, endpoint, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
    return {
      endpoint,
      accessKeyId,
      secretAccessKey,
      region,
      pid: child.pid,
      async createBucket(name: string) {
        await admin.send(new CreateBucketCommand({ Bucket: name }));
      },
      async stop() {
        admin.destroy();
        await stopChild(child);
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  await rm(dataDir, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

async function waitReady(endpoint: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited || child.exitCode !== null) {
      throw new Error(`the S3 test server exited during start-up (code ${child.exitCode}): ${output().trim()}`);
    }
    try {
      const res = await fetch(`${endpoint}/minio/health/ready`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the S3 test server at ${endpoint} was not ready within ${READY_TIMEOUT_MS / 1000}s: ${output().trim()}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
