// `reelflow run JOB.yaml`: start the job (or attach), show progress until every item has ended.
import type { Command } from 'commander';
import { framesDroppedWarning } from '../../gateway';
import { openStorage } from '../../storage';
import { UsageError } from '../errors';
import { ruleThisWorker } from '../../client/worker-rules';
import type { Plan } from '../../jobfile/plan';
import { parseAllowKeys, refuseDisallowedKeyUses } from '../../client/keys';
import { collect } from '../argv';
import { jobWorkflowId } from '../../workflows/ids';
import type { ItemEndState } from '../../domain/end-states';
import { jobResultOrCancellation } from '../../client/control';
import { inputsChangedNote, loadPlanOrExplain, refuseAnotherJobUnderName, runningExecution } from '../../client/jobs';
import { ALLOW_READ_HELP, allowedReads } from '../../client/read-allowance';
import { storeInputsOrExplain } from '../../client/job-ref';
import { hashJobInputs, recordingFiles } from '../../storage/inputs/publish';
import { createOutput } from '../output';
import { ProgressView } from '../progress';
import { openSession, type Observability, type Session } from '../../client/session';
import { addObservabilityOptions } from '../observability';
import { addCallbackOptions, callbackPlan, type CallbackOptions } from '../callbacks';
import { listenForCallbacks } from '../../client/callbacks';
import {
  describeBlocked,
  describeFilms,
  describeOutcome,
  describeStop,
  exitStatusFor,
  itemsToSend,
  readOutcome,
  startedNote,
} from '../../client/summary';
import { itemsLeftToSend, printDryRun } from './dry-run';
import { watchInterrupt, type Interrupt } from './run-interrupt';
import { enhanceCommand, reEnhanceBeforeRun } from './enhance';
import { claimOutputOrExplain } from '../../client/output-owner';
import { spawnDetachedWorker } from '../../client/detached-worker';
import { describeChoice, parseOnly, parseRedoWhich, redoRunPlan, type RedoWhich } from '../../client/redo';
import type { RedoTake } from '../../jobfile/takes';
import { estimateForRun, keyForPrices, recordRunPrices, unpricedMessage, unpricedModels, userPrices } from '../../client/estimate';
import { readManifestRows } from '../../client/manifest-rows';
import { ownedJob, type OwnedJob } from '../../worker/owned-job';
import {
  checkedNotifyTargets,
  childrenClosed,
  followUntilEnded,
  jobInput,
  preflight,
  queueForThisRunsWorker,
  refuseAnotherStartersJob,
  spawnBackgroundWorker,
  startOrAttachJob,
  startQueue,
} from '../../client/start-job';
import {
  awaitDeliveries,
  describeDeliveries,
  isOpen,
  jobEventTargets,
  type DeliveryHandOff,
  type DeliveryState,
} from '../../client/deliveries';

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

async function runCommand(jobFile: string, options: RunOptions): Promise<void> {
  if (options.json && options.logFormat === 'json') throw new UsageError('--json and --log-format json both write to stdout: choose one');
  // The listener lives in this process, beside its worker: with none here, workers elsewhere listen.
  // With --detach, the background worker listens (followJob), when there is one.
  if (callbackPlan(options) && !options.worker)
    throw new UsageError("--callbacks listens in run's own worker: with --no-worker, give --callbacks to `reelflow worker`");
  const out = createOutput(!!options.json);
  // JSON logs own stdout as --json does: human lines go to stderr.
  if (options.logFormat === 'json') out.line = out.note;
  const interrupt = watchInterrupt(resumeCommand(jobFile, options), out);
  try {
    await runJob(jobFile, options, out, interrupt);
  } finally {
    interrupt.dispose();
  }
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
  // The run's own worker reads what this user allowed this run (activities/worker-read-scope.ts).
  ruleThisWorker({ allowKeys: allowances, allowRead });
  if (options.enhanceOnly) return enhanceCommand(jobFile, { json: options.json, reEnhance: options.reEnhance }, plan);
  await preflight(plan, options.worker);
  // A chain through a gateway release that drops frames still renders, from prompts alone: said, not refused (docs/chains.md).
  const dropped = await framesDroppedWarning(plan);
  if (dropped) out.note(`warning: ${dropped}`);
  // The estimate, the gateway's published prices beneath the job's (docs/costs.md); a budget cannot
  // hold an item it cannot price: refused before anything is sent.
  const { items: toSend } = await itemsLeftToSend(plan, retryStatesOf(options));
  for (const line of await estimateForRun(plan, process.env[plan.gateway.apiKeyEnv], toSend)) out.note(line);
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
  const callbacks = options.detach ? undefined : await listenForCallbacks(callbackPlan(options), () => temporal.client, out.note);
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

/**
 * The command that takes this run up again: `reelflow run JOB`, with a redo run's own `--redo` and
 * `--only` (a plain run leaves the takes they chose alone: docs/takes.md).
 */
function resumeCommand(jobFile: string, options: RunOptions): string {
  const flags = options.redo || options.only ? describeChoice(options) : '';
  return `reelflow run ${jobFile}${flags ? ` ${flags}` : ''}`;
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
  const allowRead = allowedReads(options.allowRead);
  const input = jobInput(
    plan,
    { inputs: storedInputs?.ref, allowRead },
    { retryStates, budgetUsd: options.budget, redo, notify: options.notify.length > 0 ? checkedNotifyTargets(options.notify) : [] },
  );
  // A job this run starts is priced as it says; one it attaches to keeps the prices it started with.
  if (!running) await recordRunPrices(plan);
  // This run's own queue when a worker of this run (or its background worker) carries the job.
  const taskQueue = startQueue(worker.queue, backgroundWorker);
  const firstRunId = await scoped(() => startOrAttachJob(session.client, workflowId, taskQueue, input));
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
  await followUntilEnded(session.client, workflowId, {
    round: scoped,
    onProgress: (progress) => view.render(progress),
    stopped: () => interrupt.interrupted,
    whenStopped: interrupt.whenInterrupted,
    intervalMs: process.stderr.isTTY ? 500 : 1000,
  });
  if (interrupt.interrupted) return false;
  view.clear();
  const finished = await scoped(() => jobResultOrCancellation(session.client, workflowId, plan.job));
  if (session.worker) await scoped(() => childrenClosed(session.client, workflowId, 15_000));
  const targets = jobEventTargets(plan.notify, options.notify);
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
    const resume = resumeCommand(jobFile, options);
    if (finished.stoppedBy) for (const line of describeStop(finished.stoppedBy, resume, finished.notStarted ?? 0)) out.line(line);
    else if (finished.fatal) out.line(`stopped early: ${finished.fatal}`);
    if (finished.canceled) out.line('the job was canceled');
    // The job's own time (its workflow's start to its end), not this command's: an attach comes later.
    const startedAt = Math.min(finished.startedAt, runningSince ?? Infinity);
    for (const line of describeOutcome(outcome, jobFile, finished.finishedAt - startedAt, undefined, resume)) out.line(line);
    for (const line of describeFilms(finished.films, outcome.location)) out.line(line);
    for (const line of describeBlocked(finished, outcome.rows)) out.line(line);
    for (const line of describeDeliveries(deliveries, handedOff, jobFile)) out.line(line);
  }
  process.exitCode = exitStatusFor(outcome, finished.stoppedBy);
  // The background delivery worker needs the Temporal server this run may have started.
  return handedOff !== undefined;
}

/** run's --callbacks flags, for the background worker that listens in its place (run --detach). */
function callbackArgs(options: CallbackOptions): string[] {
  return [
    ...(options.callbacks !== undefined ? ['--callbacks', options.callbacks] : []),
    ...(options.callbackUrl !== undefined ? ['--callback-url', options.callbackUrl] : []),
    ...(options.callbacksPublic ? ['--callbacks-public'] : []),
  ];
}

/** How long `run` keeps its worker for the job's events once the job ended: receivers answer in well under this. */
const DELIVERY_WAIT_MS = 8_000;
