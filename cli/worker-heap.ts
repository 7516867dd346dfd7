// The young generation of a process that runs a worker (docs/worker-memory.md, "Young generation").
// V8 sizes a heap's young generation when the process starts and then grows it with the rate of
// allocation, so a worker's peak memory followed the machine's speed more than the job's size
// (1,000 items: 238-269 MiB at 13-27 items/s; bounded: 198-235 MiB; BENCHMARKS.md). It cannot be
// bounded later from inside the process, so a command that runs a worker starts itself again, in
// place, with the bound: process.execve keeps the pid, the terminal and the signals, and runs
// before anything was written or opened.
import { realpathSync } from 'node:fs';
import { join } from 'node:path';

const FLAG = '--max-semi-space-size';
/** 2 MiB semi-spaces, as the worker already gives its workflow thread (worker/worker.ts). */
export const WORKER_YOUNG_GENERATION = `${FLAG}=2`;

type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;

export function restartWithBoundedYoungGeneration(): void {
  // Node before 22.15 and Windows have no execve: the worker then runs with V8's own sizing.
  const execve = (process as unknown as { execve?: Execve }).execve;
  if (typeof execve !== 'function' || !isTheReelflowCommand()) return;
  // A bound the user chose (a node flag or NODE_OPTIONS) is theirs, and it ends the restart.
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((arg) => arg.startsWith(FLAG));
  if (given) return;
  execve.call(
    process,
    process.execPath,
    [process.execPath, WORKER_YOUNG_GENERATION, ...process.execArgv, ...process.argv.slice(1)],
    process.env,
  );
}

/** Only the reelflow command restarts: code that runs a command in-process (a test) keeps its process. */
function isTheReelflowCommand(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(join(__dirname, '..', '..', 'bin', 'reelflow.js'));
  } catch {
    return false;
  }
}
