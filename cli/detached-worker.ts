// The background worker `run --detach` spawns: its pid is kept in the state directory, so that
// `status` can tell "its worker is still starting" from "no worker at all" (docs/commands.md).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stateDirectory } from '../worker/state-dir';

function pidFile(workflowId: string): string {
  return join(stateDirectory(), 'logs', `worker-${workflowId}.pid`);
}

export function recordDetachedWorker(workflowId: string, pid: number): void {
  writeFileSync(pidFile(workflowId), `${pid}\n`);
}

/** Whether the worker `run --detach` spawned for this job (on this machine) is alive. */
export function detachedWorkerAlive(workflowId: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile(workflowId), 'utf8').trim());
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
