// A running job is found by its workflow id, `reelflow-<name>` (workflows/ids.ts), and a name is
// not a claim: on a shared Temporal server anyone can start a job under any name. Before a command
// attaches to, follows or acts on the job a name finds, it checks that the job is the one the user
// means: the same job file (its path on the machine that started it), and, where the running job
// recorded them, the same output location and gateway addresses. Another job under the name is
// refused, saying whose it is (file, output, gateway; never a key) and how to run this one: a name
// of its own. The id stays the name alone, rather than growing the output location into it, so
// that `status NAME`, `cancel NAME`, schedules and every id already in use keep finding their jobs
// (docs/commands.md); a clash is rare, visible, and mended by one line of the job file.
import { readFileSync } from 'node:fs';
import type { Plan } from '../jobfile/plan';
import { openStorage } from '../storage';
import type { JobInput, JobStartedAs } from '../workflows/types';
import { UsageError } from './errors';

/** What `run` records in the job's input about the job it starts (JobInput.startedAs). */
export function startedAs(plan: Plan): JobStartedAs {
  return { output: openStorage(plan.output).location, baseUrls: [...plan.gateway.baseUrls] };
}

/** The ways the running job (its input `running`) is not the job of `plan`; empty when it is the same job. */
export function differences(running: JobInput, plan: Plan): string[] {
  const found: string[] = [];
  if (running.jobFile !== plan.jobFile) found.push('job file');
  // Recorded by `run` (startedAs), or by the job itself once it continued as new (its settings).
  const settings = running.carry?.prepared.settings;
  const output = running.startedAs?.output ?? (settings ? openStorage(settings.output).location : undefined);
  const baseUrls = running.startedAs?.baseUrls ?? settings?.gateway.baseUrls;
  // A `{date}` in the output makes each day's location another: compared for the same run date only.
  const runDate = running.runDate ?? running.carry?.prepared.runDate;
  if (output !== undefined && runDate === plan.runDate && output !== openStorage(plan.output).location) found.push('output');
  if (baseUrls !== undefined && baseUrls.join('\n') !== plan.gateway.baseUrls.join('\n')) found.push('gateway');
  return found;
}

/** Where `name:` is in the job file, as `file:line` (the file alone when it cannot be read). */
function nameLine(jobFile: string): string {
  try {
    const line = readFileSync(jobFile, 'utf8')
      .split('\n')
      .findIndex((l) => /^name\s*:/.test(l));
    return line >= 0 ? `${jobFile}:${line + 1}` : jobFile;
  } catch {
    return jobFile;
  }
}

/** The refusal for a running job `workflowId` that is not the job of `plan`, or undefined when it is. */
export function anotherJobUnderName(workflowId: string, running: JobInput, plan: Plan): UsageError | undefined {
  const differ = differences(running, plan);
  if (differ.length === 0) return undefined;
  const settings = running.carry?.prepared.settings;
  const theirOutput = running.startedAs?.output ?? (settings ? openStorage(settings.output).location : 'not recorded');
  const theirGateway = (running.startedAs?.baseUrls ?? settings?.gateway.baseUrls ?? ['not recorded']).join(', ');
  return new UsageError(
    `${plan.job}: the job running under this name (${workflowId}) is another job (its ${differ.join(', ')} differ): ` +
      `job file ${running.jobFile}, output ${theirOutput}, gateway ${theirGateway}. ` +
      `Yours is ${plan.jobFile} -> ${openStorage(plan.output).location}, gateway ${plan.gateway.baseUrls.join(', ')}: ` +
      `nothing of it was started, and this command does not follow or act on the other job. To run yours now, give it a ` +
      `name of its own (\`name:\` at ${nameLine(plan.jobFile)}; its job id is reelflow-<name>), or run it once the other has ended`,
  );
}
