// `reelflow worker`: a worker for the task queue until interrupted. Start more, anywhere, to scale out.
import type { Command } from 'commander';
import { connectClient, connectWorker, resolveTemporal } from '../../worker/temporal';
import { TASK_QUEUE } from '../../client/task-queue';
import { jobResult } from '../../client/control';
import { jobHandle } from '../../client/jobs';
import { openDeliveryWorkflows } from '../../client/deliveries';
import { ruleThisWorker } from '../../client/worker-rules';
import { allowedReads } from '../../client/read-allowance';
import { collect, keySettingsOrExplain, parseAllowKeys } from '../../client/keys';
import { firstRunIdOf, ownedJob, type OwnedJob } from '../../worker/owned-job';
import { DEFAULT_MAX_ACTIVITIES, DEFAULT_MAX_WORKFLOW_TASKS, DEFAULT_SHUTDOWN_GRACE_MS } from '../../worker/shutdown';
import { parseDuration } from '../../jobfile/values';
import { UsageError } from '../errors';
import { addObservabilityOptions, startObservability, type Observability } from '../../client/session';
import { addCallbackOptions, callbackPlan, type CallbackOptions } from '../callbacks';
import { listenForCallbacks } from '../../client/callbacks';

const ALLOW_READ_HELP_WORKER =
  "let jobs read files below DIR, outside their job file's folder, where their submitter allowed it too (repeatable; " +
  'a job file or a submitter alone cannot widen it; docs/security.md)';

interface WorkerOptions extends Observability, CallbackOptions {
  maxActivities: string;
  maxWorkflowTasks: string;
  untilDone?: string;
  untilDelivered?: string;
  allowKey: string[];
  acceptKeylessJobs?: boolean;
  allowRead: string[];
  shutdownGrace: string;
}

/** `--shutdown-grace`: a duration such as 30s or 2m; 0s cancels running activities at once. */
export function parseShutdownGrace(text: string): number {
  const ms = /^0+(?:ms|s|m|h)$/.test(text) ? 0 : parseDuration(text);
  if (ms === undefined) throw new UsageError(`--shutdown-grace "${text}": not a duration; use e.g. 30s, 2m or 0s`);
  return ms;
}

export function registerWorkerCommand(program: Command): void {
  const command = program
    .command('worker')
    .description('run a worker for the task queue against the configured Temporal service, until interrupted')
    .option('--max-activities <n>', 'concurrent activities (gateway calls, downloads)', String(DEFAULT_MAX_ACTIVITIES))
    .option('--max-workflow-tasks <n>', 'concurrent workflow tasks', String(DEFAULT_MAX_WORKFLOW_TASKS))
    .option(
      '--shutdown-grace <duration>',
      'on SIGTERM/SIGINT, how long running activities (downloads, calls) may go on before they are cancelled (docs/deploy.md)',
      `${DEFAULT_SHUTDOWN_GRACE_MS / 1000}s`,
    )
    .option('--until-done <workflow-id>', "poll this job's task queue and exit once it has finished (used by run --detach)")
    .option(
      '--until-delivered <workflow-id>',
      "poll this ended job's task queue for its job events and exit once each is delivered or given up (used by run; docs/notifications.md)",
    )
    .option(
      '--allow-key <VARIABLE@ORIGIN>',
      "let jobs send $VARIABLE as their gateway key to ORIGIN, besides this user's key settings (repeatable; docs/keys.md)",
      collect,
      [],
    )
    .option('--allow-read <dir>', ALLOW_READ_HELP_WORKER, collect, [])
    .option(
      '--accept-keyless-jobs',
      "carry jobs started without a key fingerprint (their submitter held no key: a CI job, a schedule) with this worker's key (docs/keys.md)",
    );
  addObservabilityOptions(addCallbackOptions(command)).action(async (options: WorkerOptions) => {
    callbackPlan(options); // a wrong --callbacks stops it before anything starts
    // Before the first connection: the SDK's Runtime (logs, metrics) is made once per process.
    const shutdownGraceMs = parseShutdownGrace(options.shutdownGrace);
    const metrics = await startObservability(options);
    if (metrics) process.stderr.write(`reelflow worker: Prometheus metrics on ${metrics.description}\n`);
    // The key rule this worker applies to every job it takes (docs/keys.md); a wrong file stops it here.
    const allowances = parseAllowKeys(options.allowKey);
    const keySettings = keySettingsOrExplain();
    // What jobs may read outside their folders is this user's say, intersected with the submitter's
    // (activities/worker-read-scope.ts); a wrong read settings file stops it here.
    ruleThisWorker({
      allowKeys: allowances,
      acceptKeylessJobs: !!options.acceptKeylessJobs,
      allowRead: allowedReads(options.allowRead),
    });
    const target = await resolveTemporal();
    // run --detach starts its job on a queue of its own (client/task-queue.ts): its worker polls that,
    // and carries that job alone (worker/owned-job.ts).
    const ownJob = options.untilDone ?? options.untilDelivered;
    const own = ownJob ? await ownJobQueue(target, ownJob) : undefined;
    const taskQueue = own?.taskQueue ?? TASK_QUEUE;
    const connection = await connectWorker(target);
    // Callbacks signal render workflows by id, so any worker of the fleet can take any callback.
    const signaller = options.callbacks === undefined ? undefined : await connectClient(target);
    const callbacks = await listenForCallbacks(
      callbackPlan(options),
      () => signaller,
      (line) => process.stderr.write(`reelflow worker: ${line}\n`),
    );
    const { createReelflowWorker, runWorkerUntil } = await import('../../worker/worker.js');
    const worker = await createReelflowWorker({
      connection,
      namespace: target.namespace,
      taskQueue,
      ...(own ? { ownedJob: own.ownedJob } : {}),
      maxActivities: Number(options.maxActivities),
      maxWorkflowTasks: Number(options.maxWorkflowTasks),
      shutdownGraceMs,
    });
    // Listening before saying it polls: a supervisor's SIGTERM right after that line is a stop, not a kill.
    const stop = new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
      if (options.untilDone) void waitForJob(target, options.untilDone).then(resolve, resolve);
      if (options.untilDelivered && own) void waitForDeliveries(target, options.untilDelivered, own.ownedJob).then(resolve, resolve);
    });
    process.stderr.write(`reelflow worker: polling task queue "${taskQueue}" on ${target.description}\n`);
    const allowed = [...keySettings.allowances, ...allowances].map((a) => `${a.variable}@${a.origin}`);
    process.stderr.write(
      `reelflow worker: sends GATEWAY_API_KEY to loopback gateways of its own user${allowed.length ? ` and ${allowed.join(', ')}` : ' only'} ` +
        `(key settings: ${keySettings.path}; docs/keys.md)\n`,
    );
    process.stderr.write(
      options.acceptKeylessJobs
        ? 'reelflow worker: carries jobs started without a key fingerprint with its own key (--accept-keyless-jobs)\n'
        : 'reelflow worker: refuses jobs started without a key fingerprint (--accept-keyless-jobs carries them; docs/keys.md)\n',
    );
    await runWorkerUntil(worker, stop);
    await callbacks?.close();
    await signaller?.connection.close();
    await connection.close();
    if (target.embedded?.owned && !ownJob) await target.embedded.stop();
    process.stderr.write('reelflow worker: stopped\n');
  });
}

async function ownJobQueue(
  target: Awaited<ReturnType<typeof resolveTemporal>>,
  workflowId: string,
): Promise<{ taskQueue: string; ownedJob: OwnedJob }> {
  const client = await connectClient(target);
  try {
    const described = await jobHandle(client, workflowId).describe();
    return { taskQueue: described.taskQueue, ownedJob: ownedJob(workflowId, await firstRunIdOf(client, workflowId, described.runId)) };
  } finally {
    await client.connection.close();
  }
}

async function waitForJob(target: Awaited<ReturnType<typeof resolveTemporal>>, workflowId: string): Promise<void> {
  const client = await connectClient(target);
  try {
    await jobResult(client, workflowId);
  } finally {
    await client.connection.close();
  }
}

/** How often the delivery worker asks whether its job's events are all delivered or given up. */
const DELIVERIES_CHECK_MS = 2_000;

/** Resolves once no event workflow of the job's run is running (each ends delivered or given up, within 25 h). */
async function waitForDeliveries(target: Awaited<ReturnType<typeof resolveTemporal>>, workflowId: string, owned: OwnedJob): Promise<void> {
  const client = await connectClient(target);
  try {
    const firstRunId = await owned.firstRunId;
    while ((await openDeliveryWorkflows(client, workflowId, firstRunId)) > 0) {
      await new Promise((r) => setTimeout(r, DELIVERIES_CHECK_MS));
    }
  } finally {
    await client.connection.close();
  }
}
