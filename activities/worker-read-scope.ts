// Which folders outside a job file's own this worker reads for a job (docs/security.md): those its
// own user allowed (their read settings, the worker's --allow-read, or the folders `run` was given
// for the run's own worker), and of those only what the job's submitter asked for (JobInput.allowRead).
// A submitter's list alone widens nothing: on a shared cluster anyone who can start a workflow can
// write one, and a fleet worker must not read its own user's files for them.
import { isBelow } from '../jobfile/read-scope';

let allowedHere: readonly string[] = [];

/** The folders this worker's user lets jobs read outside their own (absolute paths). */
export function allowReadsInThisWorker(folders: readonly string[]): void {
  allowedHere = [...folders];
}

/** What a job that asked for `asked` may read here: each asked folder inside an allowed one, each allowed folder inside an asked one. */
export function readScopeForJob(asked: readonly string[] | undefined): string[] {
  const scope = new Set<string>();
  for (const wanted of asked ?? []) {
    for (const allowed of allowedHere) {
      if (isBelow(allowed, wanted)) scope.add(wanted);
      else if (isBelow(wanted, allowed)) scope.add(allowed);
    }
  }
  return [...scope];
}
