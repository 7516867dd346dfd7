// `reelflow run JOB.yaml`: start the job (or attach), show progress until every item has ended.
import { setMaxListeners } from 'node:events';
import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import { rememberCatalog } from '../../activities/preflight';
import { judgeCatalog, modelUses, readCatalogs, verdictMessage } from '../../gateway';
import { openStorage } from '../../storage';
import { StorageError } from '../../storage/storage';
import { InfrastructureError, UsageError } from '../errors';
import { isRunTaskQueue, newRunTaskQueue, TASK_QUEUE } from '../task-queue';
import { allowKeysInThisWorker } from '../../activities/context';
import { allowReadsInThisWorker } from '../../activities/worker-read-scope';
import { isKeyOf } from '../../activities/key-fingerprint';
import type { Plan } from '../../jobfile/plan';
import { collect, fingerprintedJob, parseAllowKeys, refuseDisallowedKeyUses, starterKeyFingerprint } from '../keys';
import { startedAs } from '../../client/job-identity';
import { jobWorkflowId } from '../../workflows/ids';
import type { JobInput } from '../../workflows/types';
import type { ItemEndState } from '../../storage/manifest';
import { jobEnded, jobProgress, jobResultOrCancellation, openItemWorkflows, startOrAttach } from '../../client/control';
import { inputsChangedNote, loadPlanOrExplain, refuseAnotherJobUnderName, runningExecution, startedJobInput } from '../../client/jobs';
import { ALLOW_READ_HELP, allowedReads } from '../../client/read-allowance';
import { storeInputsOrExplain } from '../job-ref';
import { hashJobInputs, recordingFiles } from '../../storage/inputs-publish';
import { createOutput } from '../output';
import { ProgressView } from '../progress';
import { addObservabilityOptions, openSession, type Observability, type Session } from '../session';
import { addCallbackOptions, callbackPlan, listenForCallbacks, type CallbackOptions } from '../callbacks';
import {
  describeBlocked,
  describeFilms,
  describeOutcome,
  describeStop,
  exitStatusFor,
  itemsToSend,
  readOutcome,
  type JobOutcome,
} from '../summary';
import { printDryRun } from './dry-run';
import { enhanceCommand, reEnhanceBeforeRun } from './enhance';
import { claimOutputOrExplain } from '../output-owner';
import { spawnDetachedWorker } from '../detached-worker';
import { unpricedMessage, unpricedModels } from '../../activities/plan';
import { parseOnly, parseRedoWhich, redoRunPlan, type RedoWhich } from '../redo';
import type { RedoTake } from '../../jobfile/takes';
import { estimateForRun, keyForPrices, recordRunPrices, userPrices } from '../estimate';
import { readManifestRows } from '../manifest-rows';
import { firstRunIdOf, ownedJob, type OwnedJob } from '../../worker/owned-job';
import { awaitDeliveries, describeDelivery, type DeliveryState } from '../../client/deliveries';
import { readNotifySettings, undefinedTargets } from '../../jobfile/notify-settings';
import { JobEvents } from '../../workflows/notify';

/** `--budget 50`: a number of dollars above 0, as budget.max_usd. */
function parseBudget(text: string): number {
  const usd = Number(text);
  if (text.trim() === '' || !Number.isFinite(usd) || usd <= 0)
    throw new UsageError(`--budget ${text}: give the most the job may spend in USD, a number above 0 such as 50`);
  return usd;
}

interface RunOptions extends Observability, CallbackOptions {
  detach?: boolean;
  dryRun?: boolean;
  full?: boolean;
  retryFailed?: boolean;
  retryUnknown?: boolean;
  json?: boolean;
  worker: boolean;
  inputs?: string;
  prices?: string;
  enhanceOnly?: boolean;
  reEnhance?: boolean;
  allowKey: string[];
  allowRead: string[];
  notify: string[];
  budget?: number;
  redo?: RedoWhich;
  only?: string[];
}

export function registerRunCommand(program: Command): void {
  const command = program
    .command('run')
    .description('start the job (or attach to it if running) and show live progress until every item has ended')
    .argument('<job>', 'the job file (YAML)')
    .option('--detach', 'return once the job has started (a background worker carries it on)')
    .option('--dry-run', 'print the requests that would be sent, key redacted; send nothing')
    .option('--full', 'with --dry-run: print every request, not the first of each model and protocol')
    .option(
      '--retry-failed',
      'with the rest of the job, render the items that ended failed or timed_out again as they were (same key, name and seed); ' +
        '--redo failed instead makes a new take of each, with a new seed, and renders nothing else',
    )
    .option('--retry-unknown', 'render again the items whose creation outcome was unknown')
    // takes (docs/takes.md)
    .option(
      '--redo <which>',
      'rejected | failed: render a new take (new key, name and seed) beside each rejected (picks.jsonl) or failed take, ' +
        'and nothing else; --retry-failed instead renders failed items again as they were, with the rest of the job',
      parseRedoWhich,
    )
    .option(
      '--only <ids>',
      'render a new take of these items only (ids or keys, comma-separated); with --redo, its takes among them',
      parseOnly,
    )
    .option('--no-worker', 'do not run a worker in this process (workers run elsewhere)')
    .option(
      '--inputs <location>',
      "store the job's files (job file, items_from, local references) for workers on other machines: a shared " +
        'directory or s3://bucket/prefix (default: $REELFLOW_INPUTS; with S3 output, beside the outputs)',
    )
    .option('--json', 'print one JSON summary on stdout at the end')
    .option('--budget <usd>', 'the most the job may spend, in USD; wins over budget.max_usd (docs/costs.md)', parseBudget)
    .option(
      '--prices <file>',
      "a prices file in LiteLLM's model cost map format: your prices, which win over the job file's (docs/costs.md)",
    )
    .option('--enhance-only', 'only rewrite the prompts (enhance:) and show them, as `reelflow enhance` does; render nothing')
    .option('--re-enhance', 'ask Messages again for every prompt rewrite before rendering (the new ones are used)')
    .option(
      '--allow-key <VARIABLE@ORIGIN>',
      'let the job send $VARIABLE as its gateway key to ORIGIN, for this run only (repeatable; docs/keys.md)',
      collect,
      [],
    )
    .option('--allow-read <dir>', ALLOW_READ_HELP, collect, [])
    .option(
      '--notify <name>',
      "also send this run's job events to a target of your notify.yaml (repeatable; docs/notifications.md)",
      collect,
      [],
    );
  addObservabilityOptions(addCallbackOptions(command)).action((jobFile: string, options: RunOptions) => runCommand(jobFile, options));
}

/**
 * Before anything is stored or started: the key, the output, and the gateway once (docs/preflight.md):
 * some base address must answer (else exit 3, naming every address), and where the gateway publishes
 * a catalog every model the job uses must be in it (else exit 2, naming the model and its line).
 */
async function preflight(plan: Awaited<ReturnType<typeof loadPlanOrExplain>>, withWorker: boolean): Promise<void> {
  const key = process.env[plan.gateway.apiKeyEnv];
  if (withWorker && !key) {
    throw new UsageError(
      `the environment variable ${plan.gateway.apiKeyEnv} is not set: export your gateway key in it ` +
        '(gateway.api_key_env in the job file names the variable)',
    );
  }
  try {
    await openStorage(plan.output).checkWritable();
  } catch (error) {
    if (error instanceof StorageError) throw new InfrastructureError(error.message);
    throw error;
  }
  const report = await readCatalogs(plan.gateway.baseUrls, { key });
  const verdict = judgeCatalog(report, modelUses(plan), plan.gateway.apiKeyEnv);
  if (verdict.exit === 3) throw new InfrastructureError(verdictMessage(verdict));
  if (verdict.exit === 2) throw new UsageError(verdictMessage(verdict));
  if (key) rememberCatalog(plan, report); // the worker of this process checks nothing twice
}

async function runCommand(jobFile: string, options: RunOptions): Promise<void> {
  if (options.json && options.logFormat === 'json') throw new UsageError('--json and --log-format json both write to stdout: choose one');
  // The listener lives in this process, beside its worker: with none here, workers elsewhere listen.
  // With --detach, the background worker listens (followJob), when there is one.
  if (callbackPlan(options) && !options.worker)
    throw new UsageError("--callbacks listens in run's own worker: with --no-worker, give --callbacks to `reelflow worker`");
  const out = createOutput(!!options.json);
  // JSON logs own stdout as --json does: human lines go to stderr.
  if (options.logFormat === 'json') out.line = out.note;
  const interrupt = watchInterrupt(jobFile, out);
  try {
    await runJob(jobFile, options, out, interrupt);
  } finally {
    interrupt.dispose();
  }
}

/**
 * Ctrl-C (SIGINT) or SIGTERM during `run`: the hint at once, then an orderly stop by the command's
 * own flow, never by the handler: the flow's calls to Temporal in flight are canceled, the flow
 * unwinds, and only then are the worker and the connection closed. Closing the connection under a
 * call let the SDK's retry of that call (a timer) meet the closed channel: an uncaught "Channel has
 * been shut down" and exit 1. Exit 130 (docs/commands.md). Before the session opens nothing uses
 * Temporal: the command ends at once. A second press ends it at once too.
 */
interface Interrupt {
  readonly interrupted: boolean;
  /**
   * Runs `fn` with its Temporal calls canceled by an interrupt. A scope of its own each time: the SDK
   * adds a listener per call to the signal and never removes it, so one signal for a whole run grows
   * without bound; a scope's signal goes with the scope.
   */
  scoped<T>(client: Client, fn: () => Promise<T>): Promise<T>;
  /** Set while a Temporal session is open or opening: the flow then ends the command itself. */
  sessionOpening: boolean;
  /** Clears the live display before the hint is printed. */
  clearView: () => void;
  /** Resolves when interrupted. */
  readonly whenInterrupted: Promise<void>;
  dispose(): void;
}

function watchInterrupt(jobFile: string, out: ReturnType<typeof createOutput>): Interrupt {
  const controller = new AbortController();
  let fire: () => void = () => {};
  const whenInterrupted = new Promise<void>((resolve) => {
    fire = resolve;
  });
  const state: Interrupt = {
    get interrupted() {
      return controller.signal.aborted;
    },
    async scoped(client, fn) {
      const scope = new AbortController();
      setMaxListeners(0, scope.signal); // one per call of the scope, dropped with it
      const abort = () => scope.abort();
      controller.signal.addEventListener('abort', abort, { once: true });
      if (controller.signal.aborted) scope.abort();
      try {
        return await client.withAbortSignal(scope.signal, fn);
      } finally {
        controller.signal.removeEventListener('abort', abort);
      }
    },
    sessionOpening: false,
    clearView: () => {},
    whenInterrupted,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
  const onSignal = () => {
    if (controller.signal.aborted || !state.sessionOpening) {
      if (!controller.signal.aborted) out.note(`\ninterrupted: the job keeps its state and resumes with: reelflow run ${jobFile}`);
      process.exit(130);
    }
    state.clearView();
    out.note(`\ninterrupted: the job keeps its state and resumes with: reelflow run ${jobFile}`);
    controller.abort();
    fire();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return state;
}

async function runJob(jobFile: string, options: RunOptions, out: ReturnType<typeof createOutput>, interrupt: Interrupt): Promise<void> {
  const reads = recordingFiles();
  const allowRead = allowedReads(options.allowRead);
  let plan = await loadPlanOrExplain(jobFile, undefined, reads, userPrices(options), allowRead);
  for (const warning of plan.warnings) out.note(`warning: ${warning}`);
  let redo: RedoTake[] | undefined;
  if (options.redo || options.only) {
    const chosen = await redoRunPlan(plan, openStorage(plan.output), options, reads, userPrices(options), out.note, allowRead);
    if (!chosen) return;
    ({ plan, takes: redo } = chosen);
  }
  if (options.budget !== undefined) plan.budget = { maxUsd: options.budget };
  if (options.dryRun)
    return printDryRun(plan, out, {
      full: options.full,
      pricesKey: keyForPrices(plan, options.allowKey),
      retryStates: retryStatesOf(options),
    });
  // Before any request (preflight's and the prompt rewrites' included): which key goes where is the user's decision.
  const allowances = parseAllowKeys(options.allowKey);
  refuseDisallowedKeyUses(jobFile, plan, allowances);
  allowKeysInThisWorker(allowances);
  // The run's own worker reads what this user allowed this run (activities/worker-read-scope.ts).
  allowReadsInThisWorker(allowRead);
  if (options.enhanceOnly) return enhanceCommand(jobFile, { json: options.json, reEnhance: options.reEnhance }, plan);
  await preflight(plan, options.worker);
  // The estimate, the gateway's published prices beneath the job's (docs/costs.md); a budget cannot
  // hold an item it cannot price: refused before anything is sent.
  for (const line of await estimateForRun(plan, process.env[plan.gateway.apiKeyEnv])) out.note(line);
  const unpriced = plan.budget ? unpricedModels(plan) : [];
  if (unpriced.length > 0) throw new UsageError(unpricedMessage(unpriced));
  // Earlier runs' spend counts against the budget: a row's cost that is not an amount is not counted, and named.
  // A manifest row that is not one reelflow writes (a cost below zero, a field missing) counts for
  // nothing: said before a budget is held against what the rest add up to.
  if (plan.budget) await readManifestRows(openStorage(plan.output)).catch(() => []);

  // Temporal first: with it unreachable (exit 3) nothing has been written, not even the output folder.
  interrupt.sessionOpening = true;
  const workflowId = jobWorkflowId(plan.job);
  let ownQueue: string | undefined;
  // This run's worker carries this job alone: bound to its execution once started or attached.
  const owned = ownedJob(workflowId);
  // Before the worker takes its first create, so that every create carries the callback address.
  const temporal: { client?: Session['client'] } = {};
  const callbacks = options.detach ? undefined : await listenForCallbacks(options, () => temporal.client, out.note);
  const session = await openSession({
    worker: options.worker && !options.detach,
    workerTaskQueue: async (client) => (ownQueue = await queueForThisRunsWorker(client, workflowId, plan, out.note)),
    ownedJob: () => owned,
    metrics: options.metrics,
    logFormat: options.logFormat,
  });
  temporal.client = session.client;
  const view = new ProgressView(session.client, !!process.stderr.isTTY && !options.json);
  interrupt.clearView = () => view.clear();
  let keepServer = !!options.detach;
  let storedInputs: Awaited<ReturnType<typeof storeInputsOrExplain>>;
  try {
    // An output location belongs to one job: another job's is refused before anything starts.
    await claimOutputOrExplain(plan);
    if (options.reEnhance) await reEnhanceBeforeRun(plan, out);
    // Before the job starts, so that every file its workers will ask for is there.
    storedInputs = await storeInputsOrExplain(plan, reads.texts, options.inputs, (line) => out.note(line));
  } catch (error) {
    owned.unbound('the run stopped before its job started');
    await callbacks?.close();
    await session.close();
    throw error;
  }
  try {
    if (!interrupt.interrupted)
      keepServer = await followJob(
        session,
        view,
        plan,
        jobFile,
        options,
        out,
        interrupt,
        storedInputs,
        reads,
        { queue: ownQueue, owned },
        redo,
      );
  } catch (error) {
    if (!interrupt.interrupted) throw error;
  } finally {
    owned.unbound('the run stopped before its job started');
    await callbacks?.close();
    await session.close({ keepServer });
  }
  if (interrupt.interrupted) process.exit(130);
}

/** The ended states `--retry-failed` and `--retry-unknown` render again. */
function retryStatesOf(options: RunOptions): ItemEndState[] {
  return [...(options.retryFailed ? (['failed', 'timed_out'] as const) : []), ...(options.retryUnknown ? (['unknown'] as const) : [])];
}

/** Starts the job or attaches to it, then follows it to its end; true when the server must stay up (--detach). */
async function followJob(
  session: Session,
  view: ProgressView,
  plan: Plan,
  jobFile: string,
  options: RunOptions,
  out: ReturnType<typeof createOutput>,
  interrupt: Interrupt,
  storedInputs: Awaited<ReturnType<typeof storeInputsOrExplain>>,
  reads: ReturnType<typeof recordingFiles>,
  worker: { queue: string | undefined; owned: OwnedJob & { bind(firstRunId: string): void } },
  redo: RedoTake[] | undefined,
): Promise<boolean> {
  const workflowId = jobWorkflowId(plan.job);
  const scoped = <T>(fn: () => Promise<T>) => interrupt.scoped(session.client, fn);
  const retryStates = retryStatesOf(options);
  // A running job's start, as Temporal recorded it: the job's own clock starts at its first workflow
  // task, later when no worker was there to run it (run --detach --no-worker).
  const runningSince = await scoped(() => runningExecution(session.client, workflowId).then((d) => d?.startTime.getTime()));
  const running = runningSince !== undefined;
  if (interrupt.interrupted) return false;
  const backgroundWorker = !!(options.detach && options.worker && session.target.embedded);
  if (options.detach && callbackPlan(options) && !backgroundWorker)
    throw new UsageError(
      `--detach --callbacks: the job goes to the workers of ${session.target.description} (no background worker of this run): ` +
        'give --callbacks to `reelflow worker` there (docs/callbacks.md)',
    );
  // Another user's job may hold the name: never attach to or follow a job that is not this one.
  if (running) await scoped(() => refuseAnotherJobUnderName(session.client, workflowId, plan));
  if (running && backgroundWorker) await scoped(() => refuseAnotherStartersJob(session.client, workflowId, plan));
  if (running && redo) throw new UsageError(`${plan.job} is running: --redo and --only start a run of their own once it has ended`);
  const fingerprint = starterKeyFingerprint(plan, workflowId, storedInputs?.ref.index);
  const allowRead = allowedReads(options.allowRead);
  const input: JobInput = {
    jobFile: plan.jobFile,
    runDate: plan.runDate,
    retryStates,
    ...(storedInputs ? { inputs: storedInputs.ref } : {}),
    ...(fingerprint ? { keyFingerprint: fingerprint } : {}),
    ...(options.budget !== undefined ? { budgetUsd: options.budget } : {}),
    ...(redo ? { redo } : {}),
    // The user's decision, never the job file's: its workers read outside the folder only there.
    ...(allowRead.length > 0 ? { allowRead } : {}),
    // Names only: the worker resolves each in its notify.yaml; no address or secret enters history.
    ...(options.notify.length > 0 ? { notify: checkedNotifyTargets(options.notify) } : {}),
    // The prices this run priced the job with, the gateway's included: the workers' budget holds to
    // them. Even none: the job's worker then does not ask the gateway again (activities/plan.ts).
    prices: plan.pricing ?? {},
    startedAs: startedAs(plan),
  };
  // A job this run starts is priced as it says; one it attaches to keeps the prices it started with.
  if (!running) await recordRunPrices(plan);
  // This run's own queue when a worker of this run (or its background worker) carries the job.
  const taskQueue = worker.queue ?? (backgroundWorker ? newRunTaskQueue() : TASK_QUEUE);
  const handle = await scoped(() => startOrAttach(session.client, workflowId, taskQueue, input));
  const firstRunId = await scoped(() => firstRunIdOf(session.client, workflowId, handle.firstExecutionRunId));
  worker.owned.bind(firstRunId);
  if (running) {
    out.note(`${plan.job}: already running: attached${retryStates.length ? ' (--retry-* apply to the next run, not this one)' : ''}`);
    const changed = await scoped(() =>
      inputsChangedNote(session.client, workflowId, jobFile, async () => storedInputs?.inputs ?? hashJobInputs(plan, reads.texts)),
    );
    if (changed) out.note(changed);
  } else {
    const storage = openStorage(plan.output);
    const stored = new Map((await storage.list()).map((o) => [o.name, o]));
    const outcome = await readOutcome(plan);
    const toRender = itemsToSend(plan, outcome, stored, retryStates).length;
    out.note(startedNote(plan.job, plan.items.length, toRender, outcome, retryStates, storage.location));
  }
  if (session.target.embedded) {
    // A server this run started stops when it ends, and its web UI with it (docs/commands.md).
    const until = session.target.embedded.owned && !options.detach ? ' (only while this run lasts; `reelflow server` keeps one open)' : '';
    out.note(`Temporal web UI${until}: ${session.target.embedded.uiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`);
  }

  if (options.detach) {
    if (backgroundWorker) spawnBackgroundWorker(workflowId, options.allowKey, allowRead, callbackArgs(options));
    if (backgroundWorker && options.callbacks !== undefined)
      out.note(`callbacks: the background worker listens (--callbacks ${options.callbacks}); its log says where`);
    out.note(`detached: follow it with \`reelflow status ${jobFile} --watch\``);
    if (options.json) out.result({ job: plan.job, workflowId, state: running ? 'attached' : 'started' });
    return true;
  }

  // One scope per round: the job's state, its progress, the display; the round's calls end with it.
  while (!interrupt.interrupted) {
    const ended = await scoped(async () => {
      if (await jobEnded(session.client, workflowId)) return true;
      const progress = await jobProgress(session.client, workflowId);
      if (progress && !interrupt.interrupted) await view.render(progress).catch(() => undefined);
      return false;
    }).catch(() => false);
    if (ended) break;
    await Promise.race([interrupt.whenInterrupted, new Promise((r) => setTimeout(r, process.stderr.isTTY ? 500 : 1000))]);
  }
  if (interrupt.interrupted) return false;
  view.clear();
  const finished = await scoped(() => jobResultOrCancellation(session.client, workflowId, plan.job));
  if (session.worker) await scoped(() => childrenClosed(session.client, workflowId, 15_000));
  const targets = JobEvents.targets(plan.notify, options.notify);
  let deliveries: DeliveryState[] = [];
  let handedOff: DeliveryHandOff | undefined;
  if (targets.length > 0) {
    // run's own worker carries the deliveries while it lasts: a few seconds, then where each stands.
    deliveries = await scoped(() =>
      awaitDeliveries(session.client, workflowId, firstRunId, targets, session.worker ? DELIVERY_WAIT_MS : 0),
    );
    // Those still open need a worker of the job's own queue: one in the background carries them on.
    if (session.worker && deliveries.some(isOpen))
      handedOff = spawnDetachedWorker(workflowId, 'deliveries', ['--until-delivered', workflowId]);
  }
  // This run's spend apart from the earlier runs': told by the job's own start, which a re-attached run sees too.
  const outcome = await readOutcome(plan, undefined, finished.startedAt);
  if (options.json) {
    out.result({
      workflowId,
      canceled: finished.canceled,
      fatal: finished.fatal ?? null,
      stoppedBy: finished.stoppedBy ?? null,
      ...outcome,
      rows: undefined,
      ...(targets.length > 0 ? { notified: deliveries } : {}),
      // The background worker that carries the deliveries still open (docs/notifications.md).
      ...(handedOff ? { delivery_worker: handedOff } : {}),
      ...(finished.films ? { films: finished.films } : {}),
      blocked: finished.blocked ?? [],
      failures: outcome.rows
        .filter((r) => r.state !== 'succeeded')
        .map((r) => ({ key: r.key, index: r.index, state: r.state, error: r.error })),
    });
  } else {
    if (finished.stoppedBy) for (const line of describeStop(finished.stoppedBy, jobFile, finished.notStarted ?? 0)) out.line(line);
    else if (finished.fatal) out.line(`stopped early: ${finished.fatal}`);
    if (finished.canceled) out.line('the job was canceled');
    // The job's own time (its workflow's start to its end), not this command's: an attach comes later.
    const startedAt = Math.min(finished.startedAt, runningSince ?? Infinity);
    for (const line of describeOutcome(outcome, jobFile, finished.finishedAt - startedAt)) out.line(line);
    for (const line of describeFilms(finished.films, outcome.location)) out.line(line);
    for (const line of describeBlocked(finished, outcome.rows)) out.line(line);
    for (const line of describeDeliveries(deliveries, handedOff, jobFile)) out.line(line);
  }
  process.exitCode = exitStatusFor(outcome, finished.stoppedBy);
  // The background delivery worker needs the Temporal server this run may have started.
  return handedOff !== undefined;
}

/**
 * The queue of this run's worker: a new one of its own for a job it starts; the job's own when it
 * attaches to a job another run started (one that was interrupted, say) with the same key; none
 * when the job is on the shared queue (a fleet's workers carry it).
 */
async function queueForThisRunsWorker(
  client: Client,
  workflowId: string,
  plan: Plan,
  note: (line: string) => void,
): Promise<string | undefined> {
  const running = await runningExecution(client, workflowId);
  if (!running) return newRunTaskQueue();
  await refuseAnotherJobUnderName(client, workflowId, plan);
  await refuseAnotherStartersJob(client, workflowId, plan);
  if (isRunTaskQueue(running.taskQueue)) return running.taskQueue;
  note(
    `${plan.job} runs on the shared task queue "${running.taskQueue}" (started with --no-worker or by a schedule): ` +
      'the workers of that queue (`reelflow worker`) carry it; this run follows its progress without a worker',
  );
  return undefined;
}

/** A running job started with another key is not this environment's to work on (docs/keys.md). */
async function refuseAnotherStartersJob(client: Client, workflowId: string, plan: Plan): Promise<void> {
  const started = await startedJobInput(client, workflowId).catch(() => undefined);
  const fingerprint = started?.keyFingerprint;
  const key = process.env[plan.gateway.apiKeyEnv];
  if (fingerprint === undefined || (key && isKeyOf(fingerprint, key, fingerprintedJob(plan, workflowId, started?.inputs?.index)))) return;
  throw new UsageError(
    `${plan.job} is running, started with another ${plan.gateway.apiKeyEnv} than this environment's: a worker here would ` +
      'spend this key on it, so this run does not attach. Follow it with `reelflow status`, resume it from the environment ' +
      'that started it, or cancel it (`reelflow cancel`) and run it again with this key',
  );
}

/** --detach with the embedded server: a worker in the background finishes the job, then exits. */
function spawnBackgroundWorker(workflowId: string, allowKey: readonly string[], allowRead: readonly string[], callbacks: string[]): void {
  spawnDetachedWorker(workflowId, 'job', [
    '--until-done',
    workflowId,
    ...allowKey.flatMap((spec) => ['--allow-key', spec]),
    ...allowRead.flatMap((dir) => ['--allow-read', dir]),
    ...callbacks,
  ]);
}

/** run's --callbacks flags, for the background worker that listens in its place (run --detach). */
function callbackArgs(options: CallbackOptions): string[] {
  return [
    ...(options.callbacks !== undefined ? ['--callbacks', options.callbacks] : []),
    ...(options.callbackUrl !== undefined ? ['--callback-url', options.callbackUrl] : []),
    ...(options.callbacksPublic ? ['--callbacks-public'] : []),
  ];
}

/** What a start renders: every item the job's plan pages will not skip (summary.ts itemsToSend). */
export function startedNote(
  job: string,
  total: number,
  toRender: number,
  outcome: JobOutcome,
  retryStates: readonly ItemEndState[],
  location: string,
): string {
  const { counts } = outcome;
  const done = total - toRender;
  if (toRender === 0) {
    const again =
      counts.failed + counts.timed_out + counts.unknown > 0 ? ' (--retry-failed / --retry-unknown render ended ones again)' : '';
    return `${job}: nothing to render: all ${total} item(s) already ended${again} -> ${location}`;
  }
  const changed = outcome.changed.length;
  const edited = changed > 0 ? `; ${changed} changed since rendered, rendered again beside the earlier file` : '';
  return `${job}: started ${toRender} of ${total} item(s)${done > 0 ? ` (${done} already ended)` : ''}${edited} -> ${location}`;
}

/**
 * An item's workflow reports its outcome to the job and closes in a later workflow task. The worker
 * of this process sees that task through before it stops. A courtesy: the job copes with an item
 * workflow that reported and did not close (JobWorkflow's freeHeldId); this only avoids leaving
 * such workflows open.
 */
async function childrenClosed(client: Client, jobWorkflowId: string, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    if ((await openItemWorkflows(client, jobWorkflowId)) === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** How long `run` keeps its worker for the job's events once the job ended: receivers answer in well under this. */
const DELIVERY_WAIT_MS = 8_000;

/** `run --notify` names: each must be a target of the user's notify.yaml. */
function checkedNotifyTargets(names: string[]): string[] {
  const problem = undefinedTargets(names, readNotifySettings());
  if (problem) throw new UsageError(`--notify: ${problem}`);
  return [...new Set(names)];
}

type DeliveryHandOff = ReturnType<typeof spawnDetachedWorker>;

const isOpen = (s: DeliveryState) => s.state === 'pending' || s.state === 'retrying';

function describeDeliveries(states: DeliveryState[], handedOff: DeliveryHandOff | undefined, jobFile: string): string[] {
  const ended = states.filter((s) => s.event === 'job.ended');
  const lines = ended.map((s) => `notify ${s.target}: ${describeDelivery(s)}`);
  const open = [...new Set(states.filter(isOpen).map((s) => s.target))];
  if (open.length === 0) return lines;
  const names = open.join(', ');
  if (handedOff) {
    const pid = handedOff.pid !== undefined ? ` (pid ${handedOff.pid})` : '';
    lines.push(
      `${names}: not delivered yet: a background worker${pid} retries it until it is delivered or its retry_for has passed, ` +
        `then exits; \`reelflow status ${jobFile}\` shows where it stands (log: ${handedOff.logFile})`,
    );
  } else lines.push(`${names}: retried by the workers of the job's queue (\`reelflow status\` shows it)`);
  return lines;
}
