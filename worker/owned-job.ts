// A worker that carries one job only: `run`'s own worker (and the workers `run --detach` and
// `cancel` start on a job's own queue). Its task queue is no secret: anyone who reaches the
// Temporal server (the embedded one has no authentication) can list the running jobs, read each
// one's queue and start workflows of their own on it. So the queue alone cannot say whose work a
// task is, and neither can anything in a workflow's input or id (the other user chooses both, and
// can read ours from history). What they cannot choose is the server's own record: which execution
// chain a workflow run belongs to (its first run's id, the server's random id) and which execution
// started a child. Every activity is checked against that record before it runs, because every use
// of the key is an activity: a workflow of someone else's on this queue gets no call, no key, no
// write. One lookup per workflow run, remembered for the rest of its activities.
import type { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, ActivityInterceptors, Next } from '@temporalio/worker';

/** The failure type of an activity refused because its workflow is not the job this worker carries. */
export const NOT_THIS_WORKERS_JOB = 'not_this_workers_job';

/** The one job a worker carries: its workflow id, and its execution chain's first run id once known. */
export interface OwnedJob {
  readonly workflowId: string;
  /** Resolves once the job is started or found (the worker may poll before that). */
  readonly firstRunId: Promise<string>;
}

/** The owned job `workflowId`; its first run id given, or learned later: `bind` it once the job is started or found. */
export function ownedJob(workflowId: string, known?: string): OwnedJob & { bind(firstRunId: string): void; unbound(reason: string): void } {
  let bind: (id: string) => void = () => {};
  let fail: (error: Error) => void = () => {};
  const firstRunId = new Promise<string>((resolve, reject) => {
    bind = resolve;
    fail = reject;
  });
  // An activity that waits on it when the run gives up is refused: nothing of this run is running.
  firstRunId.catch(() => undefined);
  if (known !== undefined) bind(known);
  return { workflowId, firstRunId, bind: (id) => bind(id), unbound: (reason) => fail(new Error(reason)) };
}

/** The first run id of the chain `runId` of `workflowId` belongs to, as the server records it. */
export async function firstRunIdOf(client: Client, workflowId: string, runId?: string): Promise<string> {
  const described = await client.workflow.getHandle(workflowId, runId).describe();
  // Servers that do not record it (older than 1.20) make every run its own chain's first.
  return described.raw.workflowExecutionInfo?.firstRunId || described.runId;
}

/**
 * Whether the workflow run an activity comes from is the owned job, or an item workflow its chain
 * started, or a prompt rewrite such an item started (workflows/rewrite.ts). `verified` remembers the runs already found to belong, and the job's own runs.
 */
async function belongsTo(context: Context, owned: OwnedJob, verified: Set<string>): Promise<boolean> {
  const { client } = context;
  const execution = context.info.workflowExecution;
  if (!execution) return false; // an activity started on its own, by no workflow
  const { workflowId, runId } = execution;
  const runKey = `${workflowId}\u0000${runId}`;
  if (verified.has(runKey)) return true;
  // A stopping worker cancels the activity: it does not wait for a job that will not start.
  const first = await Promise.race([owned.firstRunId, context.cancelled]);
  const isJobRun = async (id: string) =>
    verified.has(`${owned.workflowId}\u0000${id}`) || (await firstRunIdOf(client, owned.workflowId, id)) === first;
  let belongs: boolean;
  if (workflowId === owned.workflowId) {
    belongs = await isJobRun(runId);
  } else {
    // An item workflow is the job's child; a prompt rewrite (workflows/rewrite.ts) an item's child.
    belongs = false;
    let child = { workflowId, runId };
    for (let level = 0; level < 2 && !belongs; level++) {
      const parent = (await client.workflow.getHandle(child.workflowId, child.runId).describe()).raw.workflowExecutionInfo?.parentExecution;
      if (!parent?.workflowId || !parent.runId) break;
      belongs = parent.workflowId === owned.workflowId && (await isJobRun(parent.runId));
      if (belongs) verified.add(`${owned.workflowId}\u0000${parent.runId}`);
      child = { workflowId: parent.workflowId, runId: parent.runId };
    }
  }
  if (belongs) verified.add(runKey);
  return belongs;
}

class OnlyTheOwnedJob implements ActivityInboundCallsInterceptor {
  constructor(
    private readonly context: Context,
    private readonly owned: OwnedJob,
    private readonly verified: Set<string>,
  ) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const { workflowType, activityType } = this.context.info;
    const workflowId = this.context.info.workflowExecution?.workflowId ?? '(none)';
    let belongs: boolean;
    try {
      belongs = await belongsTo(this.context, this.owned, this.verified);
    } catch (error) {
      // The server did not answer (or the run gave up before its job started): nothing is sent; a
      // retry asks again, and a workflow that is not this job's never gets further than this.
      throw ApplicationFailure.create({
        type: NOT_THIS_WORKERS_JOB,
        message: `could not check that workflow ${workflowId} is job ${this.owned.workflowId}: ${(error as Error).message}`,
        nonRetryable: false,
      });
    }
    if (!belongs) {
      throw ApplicationFailure.create({
        type: NOT_THIS_WORKERS_JOB,
        message:
          `this worker carries only job ${this.owned.workflowId} and its items (the \`reelflow run\` that started it): it refuses ` +
          `${activityType} of workflow ${workflowId} (${workflowType}), which that job did not start. ` +
          'Run your own job with your own `reelflow run` or worker (docs/keys.md)',
        nonRetryable: true,
      });
    }
    return next(input);
  }
}

/** Activity interceptors that refuse, before anything runs, every activity not of `owned`'s job. */
export function onlyOwnedJobInterceptors(owned: OwnedJob): (context: Context) => ActivityInterceptors {
  const verified = new Set<string>();
  return (context) => ({ inbound: new OnlyTheOwnedJob(context, owned, verified) });
}
