// The whole system on loopback for a benchmark: a real Temporal development server (fresh state dir
// and ports), the gateway simulator in this process, and the worker as a separate process
// (`node bin/reelflow.js worker`, the built command), so its memory is measured on its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { startSimulator, type SimHandleExt, type SimOptionsExt } from '../../sim/index';
import { reelflowBin, withoutWorkerMalloc } from '../../test/support/cli';
import { tempDir, writeJob, type JobSpec } from '../../test/support/jobs';
import { startTestTemporal, type TestTemporal } from '../../test/support/temporal';
import { TASK_QUEUE } from '../../client/task-queue';
import { connectClient } from '../../worker/temporal';
import { jobWorkflowId } from '../../workflows/ids';
import { JobWorkflow } from '../../workflows/job';
import type { JobInput, JobResult } from '../../workflows/types';
import type { ManifestRow } from '../../storage/manifest';

export const BENCH_KEY = 'sk-bench-0123456789abcdef';

export interface WorkerChild {
  child: ChildProcess;
  pid: number;
  /** Current and peak resident set of the worker process, bytes (from /proc). */
  memory(): { rss: number; peak: number };
  /** CPU time the worker process has used, user and system, seconds (from /proc). */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

export interface Stack {
  temporal: TestTemporal;
  sim: SimHandleExt;
  client: Client;
  worker: WorkerChild;
  dir: string;
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

function procStatusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Starts `reelflow worker` and resolves once it polls the task queue. dist/ is shared with whoever
 * else builds on this machine: a start that meets a rebuild in progress is tried again.
 */
export async function startWorker(env: NodeJS.ProcessEnv, args: string[] = []): Promise<WorkerChild> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startWorkerOnce(env, args);
    } catch (error) {
      if (attempt >= 3 || !/not built yet|Cannot find module/.test((error as Error).message)) throw error;
      await sleep(10_000);
    }
  }
}

async function startWorkerOnce(env: NodeJS.ProcessEnv, args: string[]): Promise<WorkerChild> {
  // BENCH_WORKER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the worker under load.
  const nodeArgs = process.env.BENCH_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, reelflowBin, 'worker', ...args], {
    // The worker bounds its own memory (cli/worker-heap.ts): measured as a user starts it.
    env: { ...withoutWorkerMalloc(env), NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (d: Buffer) => {
    tail = (tail + d.toString()).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start within 60 s:\n${tail}`)), 60_000);
    const onData = () => {
      if (/polling task queue/.test(tail)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited (${String(code)}):\n${tail}`));
    });
  });
  const pid = child.pid!;
  let peak = 0;
  return {
    child,
    pid,
    memory() {
      peak = Math.max(peak, procStatusBytes(pid, 'VmHWM'));
      return { rss: procStatusBytes(pid, 'VmRSS'), peak };
    },
    cpuSeconds() {
      // Fields 14 and 15 of /proc/PID/stat (utime, stime), in clock ticks of 1/100 s; the command
      // name (field 2) is in parentheses and has no spaces here.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ');
      return (Number(fields[13]) + Number(fields[14])) / 100;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export async function startStack(sim: SimOptionsExt, workerArgs: string[] = []): Promise<Stack> {
  // test/support/temporal picks its two ports separately and other suites may run on this machine:
  // a port taken in between fails the start. Try again (bounded).
  let temporal: TestTemporal | undefined;
  for (let attempt = 1; !temporal; attempt++) {
    try {
      temporal = await startTestTemporal();
    } catch (error) {
      if (attempt >= 3) throw error;
      process.stderr.write(`Temporal dev server did not start (${(error as Error).message.split('\n')[0]}); trying again\n`);
    }
  }
  const simHandle = await startSimulator({ keys: [BENCH_KEY], distinctVideos: false, ...sim });
  const env: NodeJS.ProcessEnv = { ...temporal.env, GATEWAY_API_KEY: BENCH_KEY };
  const target = {
    address: temporal.address,
    namespace: 'default',
    connectionOptions: { address: temporal.address },
    description: 'bench',
  };
  const client = await connectClient(target);
  // The benchmarks start their jobs through the client, with no key fingerprint, as a CI job or a
  // schedule does: the worker carries them (docs/keys.md). Without it every job stopped at once.
  const worker = await startWorker(env, ['--accept-keyless-jobs', ...workerArgs]);
  const dir = tempDir('reelflow-bench-');
  return {
    temporal,
    sim: simHandle,
    client,
    worker,
    env,
    dir,
    async stop() {
      await worker.stop();
      await client.connection.close().catch(() => undefined);
      await simHandle.close();
      await temporal!.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface JobRun {
  workflowId: string;
  /** The job's directory: the job file, and its outputs in out/. */
  dir: string;
  startedAt: number;
  /** When the job workflow's result arrived. */
  resultAt: number;
  /** Latest finished_at of any manifest row: the last file. */
  lastFileAt: number;
  result: JobResult;
  rows: ManifestRow[];
  manifestLines: number;
}

/** Each job writes into its own directory under the stack's: `<dir>/<job>/out`. */
export function jobDir(stack: Stack, name: string): string {
  const dir = join(stack.dir, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function readManifest(dir: string): { rows: ManifestRow[]; lines: number } {
  const lines = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim().length > 0);
  const latest = new Map<string, ManifestRow>();
  for (const l of lines) {
    const row = JSON.parse(l) as ManifestRow;
    latest.set(row.key, row);
  }
  return { rows: [...latest.values()], lines: lines.length };
}

/** Writes the job into the stack's directory, starts JobWorkflow through the client, waits for it. */
export async function runJob(
  stack: Stack,
  spec: Omit<JobSpec, 'baseUrls'> & { baseUrls?: string[] },
  options: {
    historyBudget?: number;
    onStarted?: () => void;
  } = {},
): Promise<JobRun> {
  const dir = jobDir(stack, spec.name);
  const jobFile = writeJob(dir, { ...spec, baseUrls: spec.baseUrls ?? stack.sim.urls });
  const workflowId = jobWorkflowId(spec.name);
  const input: JobInput = { jobFile, runDate: '2026-01-01', ...(options.historyBudget ? { historyBudget: options.historyBudget } : {}) };
  const startedAt = Date.now();
  const handle = await stack.client.workflow.start(JobWorkflow, { taskQueue: TASK_QUEUE, workflowId, args: [input] });
  options.onStarted?.();
  const result = (await handle.result()) as JobResult;
  const resultAt = Date.now();
  const { rows, lines } = readManifest(dir);
  const lastFileAt = Math.max(...rows.map((r) => Date.parse(r.finished_at)));
  return { workflowId, dir, startedAt, resultAt, lastFileAt, result, rows, manifestLines: lines };
}

export interface ExecutionSize {
  workflowId: string;
  runId: string;
  historyLength: number;
}

/** Every run of the job and of its children (visibility), with its history length. */
export async function listJobExecutions(client: Client, workflowId: string): Promise<ExecutionSize[]> {
  const query = `WorkflowId = "${workflowId}" OR WorkflowId STARTS_WITH "${workflowId}/"`;
  const out: ExecutionSize[] = [];
  for await (const info of client.workflow.list({ query })) {
    out.push({ workflowId: info.workflowId, runId: info.runId, historyLength: info.historyLength });
  }
  return out;
}

export function items(prefix: string, n: number): JobSpec['items'] {
  return Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i + 1}`, prompt: `${prefix} prompt ${i + 1}` }));
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
