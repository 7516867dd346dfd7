// The memory bounds of a process that runs a worker (docs/worker-memory.md, "Young generation" and
// "Malloc"). All are read once, when the process starts: V8 sizes a heap's young generation then
// and grows it with the rate of allocation, so a worker's peak memory followed the machine's speed
// more than the job's size (1,000 items: 238-269 MiB at 13-27 items/s; bounded: 198-235 MiB;
// BENCHMARKS.md), and glibc reads its MALLOC_ settings then. So a command that runs a worker starts
// itself again, in place, with them: process.execve keeps the pid, the terminal and the signals, and
// runs before anything was written or opened.
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { commandLine } from './argv';

const FLAG = '--max-semi-space-size';
/** 2 MiB semi-spaces, as the worker already gives its workflow thread (worker/worker.ts). */
export const WORKER_YOUNG_GENERATION = `${FLAG}=2`;
/**
 * glibc's malloc, for a process whose threads (the SDK's Rust core, the workflow thread, V8's
 * compilers) allocate and free large blocks all the time:
 * - two arenas, not one per allocating thread (up to 8 per core), each keeping freed memory;
 * - blocks of 128 KiB and more in mappings of their own, returned when freed. glibc's default
 *   moves that threshold up (to 32 MiB) each time a large block is freed, after which such blocks
 *   come from the arenas, which fragment and keep tens of MiB: a long job's worker held 230-256 MiB
 *   where a fixed threshold holds 184-193 (BENCHMARKS.md, "memory", the runs of 2026-11-25 from 16:21 UTC).
 */
export const WORKER_MALLOC = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' } as const;

/** `run` flags with which no worker runs in the process (cli/commands/run.ts). */
const RUN_WITHOUT_WORKER = new Set(['--detach', '--dry-run', '--no-worker', '--enhance-only', '--help', '-h']);

/**
 * Whether the command line runs a worker in this process: `reelflow worker`, or `run` without a
 * flag that leaves the work to others. Read from argv alone, before the program (the Temporal SDK,
 * commander, every command) is loaded, so the restart costs a bare start of Node, not two loads of
 * everything (about 0.8 s of CPU per `run`). A misjudged command line only costs the bounds or one
 * restart: nothing it decides changes what the command does.
 */
export function commandRunsAWorker(argv: readonly string[]): boolean {
  const { word: command, rest } = commandLine(argv);
  const end = rest.indexOf('--');
  const flags = (end < 0 ? rest : rest.slice(0, end)).map((arg) => arg.split('=')[0]!);
  if (command === 'worker') return !flags.some((flag) => flag === '--help' || flag === '-h');
  if (command === 'run') return !flags.some((flag) => RUN_WITHOUT_WORKER.has(flag));
  return false;
}

type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;

export function restartWithMemoryBounds(): void {
  // Node before 22.15 and Windows have no execve: the worker then runs with V8's and glibc's own sizing.
  const execve = (process as unknown as { execve?: Execve }).execve;
  if (typeof execve !== 'function' || !isTheReelflowCommand()) return;
  // A bound the user chose (a node flag, NODE_OPTIONS, a MALLOC_ variable) is theirs. Once all are
  // set, the restart ends.
  const youngGiven = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((arg) => arg.startsWith(FLAG));
  const mallocGiven = Object.keys(WORKER_MALLOC).every((name) => process.env[name] !== undefined);
  if (youngGiven && mallocGiven) return;
  execve.call(
    process,
    process.execPath,
    [process.execPath, ...(youngGiven ? [] : [WORKER_YOUNG_GENERATION]), ...process.execArgv, ...process.argv.slice(1)],
    { ...WORKER_MALLOC, ...process.env },
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
