// Helpers for the resilience suite: a seeded PRNG, the worker as a child process that can be
// killed, and scans of logs, files and histories for a secret.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { reelflowBin } from '../support/cli';

/** The same seed gives the same chaos schedule: the simulator's own seeded generator. */
export { mulberry32 as prng } from '../../sim/prng';

export function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

import { sleep, until } from '../support/wait';

export { sleep, until };

export interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<void>;
}

/** `node bin/reelflow.js worker` with its output appended to `logFile`; resolves once it polls. */
export async function startWorker(env: NodeJS.ProcessEnv, logFile: string): Promise<WorkerProcess> {
  const fd = openSync(logFile, 'a');
  // Only this worker's own lines count: a worker killed with SIGKILL leaves its "polling" line
  // with no "stopped" after it, and taking that for this one's made the next chaos step (a server
  // restart) race this worker's start-up, which then started the embedded server itself.
  const from = statSync(logFile).size;
  const child = spawn(process.execPath, [reelflowBin, 'worker'], { env: { ...env, NO_COLOR: '1' }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ownOutput = () => readFileSync(logFile).subarray(from).toString('utf8');
  await until(
    () => {
      if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode}: ${ownOutput().slice(-2000)}`);
      return /polling task queue/.test(ownOutput());
    },
    60_000,
    'the worker to start',
  );
  return { child, exited };
}

export async function stopWorker(worker: WorkerProcess): Promise<void> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  worker.child.kill('SIGTERM');
  const timer = setTimeout(() => worker.child.kill('SIGKILL'), 15_000);
  await worker.exited;
  clearTimeout(timer);
}

/** Files under `dir` (recursively) whose bytes contain `secret`. */
export function filesContaining(dir: string, secret: string): string[] {
  const needle = Buffer.from(secret);
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(needle)) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

/** True when `value` (a history as the client returns it) holds `secret` in any string or payload bytes. */
export function holdsSecret(value: unknown, secret: string, depth = 0): boolean {
  if (depth > 64 || value === null || value === undefined) return false;
  if (typeof value === 'string') return value.includes(secret);
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).includes(Buffer.from(secret));
  if (typeof value !== 'object') return false;
  for (const v of Object.values(value as Record<string, unknown>)) if (holdsSecret(v, secret, depth + 1)) return true;
  return false;
}

/**
 * The whole list first, then the histories, so that a page token is never held across slow reads.
 * A failed list starts over, and each failure is printed with its gRPC cause: "Failed to list
 * workflows" alone once hid that the server was down (see startWorker).
 */
async function listExecutions(client: Client): Promise<Array<{ workflowId: string; runId: string }>> {
  for (let attempt = 1; ; attempt++) {
    try {
      const out: Array<{ workflowId: string; runId: string }> = [];
      for await (const info of client.workflow.list()) out.push({ workflowId: info.workflowId, runId: info.runId });
      return out;
    } catch (error) {
      const cause = (error as { cause?: { details?: string; code?: number } }).cause;
      process.stderr.write(`chaos: listing workflows failed (attempt ${attempt}): ${String(error)} (${cause?.details ?? String(cause)})\n`);
      if (attempt >= 4) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000 * attempt));
    }
  }
}

/** Every execution on the server (the suite's server holds only its own job), and for each needle the ones holding it. */
export async function historiesContaining(client: Client, needles: string[]): Promise<{ scanned: number; hits: Map<string, string[]> }> {
  const hits = new Map<string, string[]>(needles.map((n) => [n, []]));
  let scanned = 0;
  for (const info of await listExecutions(client)) {
    const history = await client.workflow.getHandle(info.workflowId, info.runId).fetchHistory();
    scanned++;
    const json = JSON.stringify(history);
    for (const needle of needles) {
      if (holdsSecret(history, needle) || json.includes(needle)) hits.get(needle)!.push(`${info.workflowId} (${info.runId})`);
    }
  }
  return { scanned, hits };
}
