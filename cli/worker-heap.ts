// The memory bounds of a process that runs a worker (docs/worker-memory.md, "Young generation" and
// "Malloc arenas"). Both are read once, when the process starts: V8 sizes a heap's young
// generation then and grows it with the rate of allocation, so a worker's peak memory followed the
// machine's speed more than the job's size (1,000 items: 238-269 MiB at 13-27 items/s; bounded:
// 198-235 MiB; BENCHMARKS.md), and glibc reads MALLOC_ARENA_MAX then (2 arenas: ~10 % less).
// So a command that runs a worker starts itself again, in place, with both: process.execve keeps
// the pid, the terminal and the signals, and runs before anything was written or opened.
import { realpathSync } from 'node:fs';
import { join } from 'node:path';

const FLAG = '--max-semi-space-size';
/** 2 MiB semi-spaces, as the worker already gives its workflow thread (worker/worker.ts). */
export const WORKER_YOUNG_GENERATION = `${FLAG}=2`;
/** glibc's malloc arenas: one per thread that allocates (up to 8 per core) without it. */
export const WORKER_MALLOC_ARENAS = { MALLOC_ARENA_MAX: '2' } as const;

type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;

export function restartWithMemoryBounds(): void {
  // Node before 22.15 and Windows have no execve: the worker then runs with V8's and glibc's own sizing.
  const execve = (process as unknown as { execve?: Execve }).execve;
  if (typeof execve !== 'function' || !isTheReelflowCommand()) return;
  // A bound the user chose (a node flag, NODE_OPTIONS, MALLOC_ARENA_MAX) is theirs. Once both are
  // set, the restart ends.
  const youngGiven = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((arg) => arg.startsWith(FLAG));
  const arenasGiven = process.env.MALLOC_ARENA_MAX !== undefined;
  if (youngGiven && arenasGiven) return;
  execve.call(
    process,
    process.execPath,
    [process.execPath, ...(youngGiven ? [] : [WORKER_YOUNG_GENERATION]), ...process.execArgv, ...process.argv.slice(1)],
    { ...WORKER_MALLOC_ARENAS, ...process.env },
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
