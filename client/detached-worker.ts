// The background workers `run` spawns: `run --detach`'s, which carries its job to the end, and the
// one that carries a job's undelivered events once `run` ends (docs/notifications.md). Their pids
// are kept in the state directory, so that `status` can tell "its worker is still starting" from
// "no worker at all" (docs/commands.md).
import { spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../worker/bundle';
import { ensureWritableDir, stateDirectory } from '../worker/state-dir';

/** `job`: run --detach's worker; `deliveries`: the worker of an ended job's events. */
export type DetachedWorkerKind = 'job' | 'deliveries';

function logsDirectory(): string {
  return ensureWritableDir(join(stateDirectory(), 'logs'), 'state directory');
}

function fileName(workflowId: string, kind: DetachedWorkerKind, extension: string): string {
  return `worker-${kind === 'job' ? '' : 'deliveries-'}${workflowId}.${extension}`;
}

function pidFile(workflowId: string, kind: DetachedWorkerKind = 'job'): string {
  return join(stateDirectory(), 'logs', fileName(workflowId, kind, 'pid'));
}

/** Starts `reelflow worker ARGS` in the background, its output in the state directory's logs; its pid and log file. */
export function spawnDetachedWorker(workflowId: string, kind: DetachedWorkerKind, args: string[]): { pid?: number; logFile: string } {
  const logFile = join(logsDirectory(), fileName(workflowId, kind, 'log'));
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [join(projectRoot, 'bin', 'reelflow.js'), 'worker', ...args], {
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  if (child.pid !== undefined) writeFileSync(pidFile(workflowId, kind), `${child.pid}\n`);
  child.unref();
  return { ...(child.pid !== undefined ? { pid: child.pid } : {}), logFile };
}

/** Whether the worker `run --detach` (or, `deliveries`, run's hand-off) spawned for this job on this machine is alive. */
export function detachedWorkerAlive(workflowId: string, kind: DetachedWorkerKind = 'job'): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile(workflowId, kind), 'utf8').trim());
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
