// Runs the built `reelflow` command as a user would: a child process, real output, real exit status.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after } from 'node:test';
import { WORKER_MALLOC } from '../../cli/worker-heap';

export const reelflowBin = join(__dirname, '..', '..', 'bin', 'reelflow.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  /** Resolves when stderr or stdout has printed text matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  done: Promise<CliResult>;
}

/**
 * Process groups of the commands still running. A test that times out never awaits its command, so
 * whatever is left is killed when the test file's process exits (commands run in their own group,
 * with whatever they started in it).
 */
const running = new Set<number>();
function killRunning(): void {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
process.once('exit', killRunning);
// Node 22 and later neither end nor signal a file whose test timed out: it lives as long as the
// command does. A root-level after hook runs once the file's tests are over, timed out or not.
// (Only inside a test run: the benchmarks use this module too.)
if (process.env.NODE_TEST_CONTEXT) after(killRunning);
// The test runner ends a test file that outlives --test-timeout with SIGTERM, which skips 'exit'.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    killRunning();
    process.kill(process.pid, signal);
  });
}

/** `env` without the malloc settings a worker sets for itself (cli/worker-heap.ts): a worker started as a user starts it. */
export function withoutWorkerMalloc(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, ...Object.fromEntries(Object.keys(WORKER_MALLOC).map((name) => [name, undefined])) };
}

export function startCli(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): CliRun {
  const child = spawn(process.execPath, [reelflowBin, ...args], {
    env: { ...(options.env ?? process.env), NO_COLOR: '1' },
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid;
  if (pid !== undefined) running.add(pid);
  child.once('exit', () => {
    if (pid !== undefined) running.delete(pid);
  });
  let stdout = '';
  let stderr = '';
  const watchers: Array<{ pattern: RegExp; resolve: () => void }> = [];
  const check = () => {
    for (const w of [...watchers])
      if (w.pattern.test(stdout) || w.pattern.test(stderr)) {
        watchers.splice(watchers.indexOf(w), 1);
        w.resolve();
      }
  };
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    check();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    check();
  });
  const done = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return {
    child,
    done,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${pattern}; stderr so far:\n${stderr}\nstdout:\n${stdout}`)),
          timeoutMs,
        );
        watchers.push({
          pattern,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
        check();
      });
    },
  };
}

export function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
