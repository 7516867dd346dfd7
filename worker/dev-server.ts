// The embedded default: the Temporal CLI's development server with a SQLite file in the state
// directory. One server per state directory; a second reelflow process reuses it, and the process
// that started it stops it on exit. A server left behind by a killed process is adopted.
import { spawn, execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, createConnection } from 'node:net';
import { join } from 'node:path';
import { projectRoot } from './bundle';
import { TemporalUnavailableError } from './errors';
import { ensureWritableDir } from './state-dir';

export interface DevServer {
  address: string;
  uiUrl: string;
  /** True when this process started it (or adopted an orphan) and will stop it. */
  owned: boolean;
  stop(): Promise<void>;
  /** Resolves when a server this process started exits, with its exit code (foreground servers). */
  exited?: Promise<number | null>;
}

interface ServerRecord {
  pid: number;
  ownerPid: number;
  /** A server run by `reelflow server` belongs to that process; never adopted by others. */
  foreground: boolean;
  /** The address it listens on (`--ip`); absent in records from before the option: 127.0.0.1. */
  ip?: string;
  port: number;
  uiPort: number;
}

/** Where to reach a server listening on `ip` from this machine. */
function reachableHost(ip = '127.0.0.1'): string {
  return ip === '0.0.0.0' ? '127.0.0.1' : ip === '::' ? '::1' : ip;
}

function hostPort(ip: string | undefined, port: number): string {
  const host = reachableHost(ip);
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function portAnswers(port: number, timeoutMs = 500, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host, port });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/** `preferred` when it is free, else any free loopback port (0 asks for any). */
export async function freePort(preferred = 0): Promise<number> {
  if (preferred > 0 && (await portFree(preferred))) return preferred;
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** The Temporal CLI binary: provisioned by scripts/temporal.sh (env, PATH, cache, Go build). */
export function temporalCliPath(env: NodeJS.ProcessEnv = process.env): string {
  const known = env.REELFLOW_TEMPORAL_CLI ?? env.TEMPORAL_CLI_PATH;
  if (known && existsSync(known)) return known;
  try {
    return execFileSync('bash', [join(projectRoot, 'scripts', 'temporal.sh'), '--print-path', '--quiet'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
  } catch {
    throw new TemporalUnavailableError(
      'cannot provide the Temporal CLI: install Go and run `npm run setup`, put `temporal` on PATH ' +
        '(or set TEMPORAL_CLI_PATH), or set TEMPORAL_ADDRESS to a running Temporal service',
    );
  }
}

function readRecord(file: string): ServerRecord | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ServerRecord;
  } catch {
    return undefined;
  }
}

/** The embedded server recorded for a state directory, if one was started there and not stopped. */
export function recordedServer(stateDir: string): { pid: number; port: number; uiPort: number } | undefined {
  const record = readRecord(join(stateDir, 'temporal', 'server.json'));
  return record && record.pid > 0 ? { pid: record.pid, port: record.port, uiPort: record.uiPort } : undefined;
}

function writeRecord(file: string, record: ServerRecord): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(record));
  renameSync(`${file}.tmp`, file);
}

async function waitUntilAnswering(host: string, port: number, pid: number, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await portAnswers(port, 500, host)) return;
    if (!alive(pid)) {
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '';
      throw new TemporalUnavailableError(`the Temporal development server exited during start-up. Its log (${logFile}):\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new TemporalUnavailableError(
    `the Temporal development server did not answer on ${host}:${port} within ${timeoutMs / 1000} s (log: ${logFile})`,
  );
}

function stopper(record: ServerRecord, recordFile: string): () => Promise<void> {
  return async () => {
    if (!alive(record.pid)) return;
    process.kill(record.pid, 'SIGTERM');
    for (let i = 0; i < 50 && alive(record.pid); i++) await new Promise((r) => setTimeout(r, 100));
    if (alive(record.pid)) process.kill(record.pid, 'SIGKILL');
    if (readRecord(recordFile)?.pid === record.pid) writeRecord(recordFile, { ...record, pid: -1 });
  };
}

/** Temporal's own gRPC port: the embedded server takes it when free, and a configured address without a port means it. */
export const TEMPORAL_PORT = 7233;

/**
 * The development server's environment: only what a process needs to run (and Go's own tuning).
 * The commands that start it hold the gateway key, cloud and cluster credentials in theirs, and a
 * server can outlive them for hours, readable in /proc/<pid>/environ by the user's processes.
 */
const SERVER_ENVIRONMENT =
  /^(PATH|HOME|USER|LOGNAME|SHELL|TMPDIR|TMP|TEMP|TZ|LANG|LANGUAGE|LC_[A-Z_]+|GOMAXPROCS|GOMEMLIMIT|GOGC|GODEBUG)$/;

export function serverEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name, value]) => value !== undefined && SERVER_ENVIRONMENT.test(name)));
}

export interface DevServerOptions {
  stateDir: string;
  /** `reelflow server`: this process owns the server for its whole life, and stays alive with it. */
  foreground?: boolean;
  /** Address to listen on (default 127.0.0.1; 0.0.0.0 for a fleet's workers on other machines). */
  ip?: string;
  port?: number;
  uiPort?: number;
  startTimeoutMs?: number;
}

/** Reuses the running server of this state directory, or starts one. */
export async function ensureDevServer(options: DevServerOptions): Promise<DevServer> {
  const dir = ensureWritableDir(join(options.stateDir, 'temporal'), 'state directory');
  const recordFile = join(dir, 'server.json');
  const existing = readRecord(recordFile);
  if (existing && existing.pid > 0 && alive(existing.pid) && (await portAnswers(existing.port, 500, reachableHost(existing.ip)))) {
    // A server whose owner died (kill -9 of `reelflow run`) is adopted, so it is stopped eventually.
    const adopt = !existing.foreground && !alive(existing.ownerPid);
    if (adopt) writeRecord(recordFile, { ...existing, ownerPid: process.pid });
    return {
      address: hostPort(existing.ip, existing.port),
      uiUrl: `http://${hostPort(existing.ip, existing.uiPort)}`,
      owned: adopt,
      stop: adopt ? stopper(existing, recordFile) : async () => {},
    };
  }
  const port = options.port ?? (await freePort(existing?.port ?? TEMPORAL_PORT));
  const uiPort = options.uiPort ?? (await freePort(existing?.uiPort ?? 8233));
  if (options.port && !(await portFree(options.port))) {
    throw new TemporalUnavailableError(`port ${options.port} for the Temporal development server is taken: choose another with --port`);
  }
  const ip = options.ip ?? '127.0.0.1';
  const logFile = join(dir, 'server.log');
  const logFd = openSync(logFile, 'a');
  const child = spawn(
    temporalCliPath(),
    [
      'server',
      'start-dev',
      '--db-filename',
      join(dir, 'dev.sqlite'),
      '--ip',
      ip,
      '--port',
      String(port),
      '--ui-port',
      String(uiPort),
      '--log-level',
      'warn',
      // WAL with synchronous=normal: a killed process loses nothing (only a power cut can drop the
      // last transactions), and the per-event fsyncs that made the server I/O-bound are gone.
      '--sqlite-pragma',
      'journal_mode=wal',
      '--sqlite-pragma',
      'synchronous=normal',
    ],
    { stdio: ['ignore', logFd, logFd], detached: true, env: serverEnvironment() },
  );
  closeSync(logFd);
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  // A background server must not keep a finished command alive; `reelflow server` is kept alive by it.
  if (!options.foreground) child.unref();
  if (child.pid === undefined) throw new TemporalUnavailableError('could not start the Temporal development server');
  const record: ServerRecord = { pid: child.pid, ownerPid: process.pid, foreground: !!options.foreground, ip, port, uiPort };
  writeRecord(recordFile, record);
  await waitUntilAnswering(reachableHost(ip), port, child.pid, logFile, options.startTimeoutMs ?? 60_000);
  return {
    address: hostPort(ip, port),
    uiUrl: `http://${hostPort(ip, uiPort)}`,
    owned: true,
    stop: stopper(record, recordFile),
    exited,
  };
}
