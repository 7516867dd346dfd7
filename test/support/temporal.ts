// A real Temporal development server for a test file: its own state directory and free ports.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDevServer, freePort, recordedServer, type DevServer } from '../../worker/dev-server';

export interface TestTemporal {
  address: string;
  stateDir: string;
  /** The dev server's process (benchmarks read its CPU time). */
  serverPid: number;
  server: DevServer;
  /** Environment for CLI child processes that should use this server as their embedded one. */
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

export async function startTestTemporal(): Promise<TestTemporal> {
  const stateDir = mkdtempSync(join(tmpdir(), 'reelflow-test-state-'));
  // Fresh ports, not the 7233 default: test files run in parallel, each with its own server.
  const server = await ensureDevServer({
    stateDir,
    foreground: true,
    startTimeoutMs: 90_000,
    port: await freePort(),
    uiPort: await freePort(),
  });
  const env = { ...process.env, REELFLOW_STATE_DIR: stateDir, TEMPORAL_ADDRESS: undefined };
  // The server runs detached; a test process that dies early must not leave it behind.
  const pid = recordedServer(stateDir)?.pid;
  const killOnExit = () => {
    try {
      if (pid) process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  process.once('exit', killOnExit);
  const handle: TestTemporal = {
    address: server.address,
    stateDir,
    server,
    env,
    serverPid: pid ?? 0,
    async stop() {
      process.off('exit', killOnExit);
      // `server` may have been replaced by a restarted one (durability tests): stop the current one.
      await handle.server.stop();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
  return handle;
}
