// RenderWorkflow: one item, from prompt to a verified file and a manifest line. The waits between
// status checks are workflow timers, so a long render holds no worker slot and survives restarts.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  condition,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { ManifestRow } from '../storage/manifest/row';
import { gatewayActivities, recording } from './activities';
import { nextPollDelay, type ProgressSample } from './polling';
import { SharedPermit } from './limiter';
import { hasPatch } from './patches';
import { roundUsd } from '../domain/money';
import type { RewriteCost } from '../jobfile/prices';
import { DEFAULT_BACKSTOP_MS } from '../jobfile/values';
import { asFailureKind, FailureType, jobWideCause, type FailureKind } from '../domain/failures';
import { bounded, LogEvent } from '../activities/log-events';
import type { DownloadedVideo } from '../activities/download';
import type { PriorTask } from '../activities/plan';
import type { CreatedTaskInfo, EnhancedPrompt, TaskCheck } from '../activities/render';
import type { ItemEndState } from '../domain/end-states';
import type { ItemOutcome, RenderInput, RenderStatus } from './types';
import { recordedItem } from './recorded-item';
import { rewriteAcrossTakes } from './rewrite';
import { TASK_CALLBACK_SIGNAL } from './ids';

/** The takes of a prompt share its rewrite through one RewriteWorkflow (history: a child in place of the enhance activity). */
const ONE_REWRITE_PER_PROMPT_TEXT = 'one-rewrite-per-prompt-text';

export const itemStatusQuery = defineQuery<RenderStatus>('itemStatus');
export const itemDoneSignal = defineSignal<[ItemOutcome]>('itemDone');
/** A callback came for the item's task: a hint, never a state (docs/callbacks.md). */
export const taskCallbackSignal = defineSignal(TASK_CALLBACK_SIGNAL);

/** A callback wakes the wait before the next status check, and waits stretch to polling.backstop. */
const CALLBACK_WAKES_STATUS_CHECK = 'callback-wakes-status-check';

class ItemEnded extends Error {
  constructor(
    readonly state: ItemEndState,
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
  }
}

/** Error type names from activities (ApplicationFailure.type) map to end states. */
function endFromFailure(error: unknown, during: string): ItemEnded {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  if (failure instanceof ApplicationFailure) {
    // Activities fail with the kinds of domain/failures.ts (activities/failures.ts); any
    // other type (an SDK's, a library's) is an `error` that names it.
    const kind = asFailureKind(failure.type);
    const state: ItemEndState = kind === FailureType.ambiguousCreate ? 'unknown' : 'failed';
    return new ItemEnded(state, kind ?? FailureType.error, kind || !failure.type ? failure.message : `${failure.type}: ${failure.message}`);
  }
  if (failure instanceof TimeoutFailure) {
    // A create that timed out may have reached the gateway: its outcome is unknown.
    const state: ItemEndState = during === 'create' ? 'unknown' : 'failed';
    return new ItemEnded(state, FailureType.activityTimeout, `${during} did not finish in time (${failure.timeoutType})`);
  }
  return new ItemEnded('failed', FailureType.error, `${during}: ${(failure as Error | undefined)?.message ?? String(error)}`);
}

/**
 * The enhance activity's answer: the text to create with, and what this run's rewrite cost. A
 * string is the answer of a worker from before priced rewrites (or a history from before them): the
 * estimate stands. The stored rewrite reused: nothing paid. Paid with no figure: the estimate.
 */
function enhancedOf(
  answer: string | EnhancedPrompt,
  estimate: RewriteCost | undefined,
): { prompt: string; cost?: RewriteCost; at?: string } {
  if (typeof answer === 'string') return { prompt: answer, cost: estimate };
  if (!answer.paid) return { prompt: answer.prompt };
  return { prompt: answer.prompt, cost: answer.cost ?? estimate, ...(answer.at ? { at: answer.at } : {}) };
}

/** For `.catch`: a failed call ends the item; a cancellation (the job is being canceled) stays one. */
function endedBy(during: string) {
  return (error: unknown): never => {
    throw isCancellation(error) ? error : endFromFailure(error, during);
  };
}

/** The fields every item event carries (docs/logs.md). */
function itemFields(input: RenderInput): { jobId: string; key: string; model: string } {
  return { jobId: input.jobWorkflowId, key: input.item.key, model: input.item.request.model };
}

export async function RenderWorkflow(input: RenderInput): Promise<ItemOutcome> {
  const { item, settings } = input;
  const fields = itemFields(input);
  const status: RenderStatus = { key: item.key, phase: 'pending', polls: 0 };
  setHandler(itemStatusQuery, () => status);
  // Set by a callback, cleared when the check it asks for starts: callbacks during a wait wake it
  // once, and one that comes during a check asks for one more (it may say what the check missed).
  let callbackHint = false;
  setHandler(taskCallbackSignal, () => {
    callbackHint = true;
  });
  const calls = gatewayActivities(settings);
  let prompt = item.request.prompt;
  let enhanced: string | undefined;
  let download: DownloadedVideo | undefined;
  let ended: ItemEnded | undefined;
  let createdOn: string | undefined;
  let renderMs: number | undefined;
  /** The rewrite this run paid for, priced: from its answer's usage, else the page's estimate (docs/costs.md). */
  let rewrite: RewriteCost | undefined;
  /** The paid rewrite's record (its `at`): the row names it, so the spend counts the call once. */
  let rewriteAt: string | undefined;
  /** Creates of this run that may have reached the gateway (the budget's spend, docs/costs.md). */
  const sent: CreatesSent = { maybe: 0 };
  // concurrency.shared: a permit of the key's limiter, held from before the item's first gateway
  // call until its render ends however it ends (docs/limits.md). Jobs without it ask nothing.
  const permit =
    settings.concurrency.shared && hasPatch('shared-limit-permit') ? new SharedPermit(settings, item.request.model) : undefined;

  try {
    await permit?.acquire().catch(endedBy('asking for a permit of the shared limits'));
    // A task the item already holds (an earlier run's: canceled, timed out, its video lost) is
    // asked first: paid work is reused, and only a task that is gone or failed is created again.
    const held = item.prior ? await askHeldTask(item.prior, input, calls, status) : undefined;
    let created: CreatedTaskInfo;
    let check: TaskCheck | undefined;
    /** Polling's time limit counts from here: the create, or the resumption of a held task. */
    let pollingFrom: number;
    if (held) {
      ({ created, check } = held);
      enhanced = item.prior?.enhancedPrompt;
      pollingFrom = Date.now();
      Object.assign(status, { phase: 'rendering', baseUrl: check.baseUrl });
    } else {
      if (settings.enhance) {
        status.phase = 'enhancing';
        // Spent from the call on, answered or not: the gateway may bill a call whose answer was lost.
        const estimate: RewriteCost | undefined =
          item.rewriteEstimateUsd === undefined ? undefined : { usd: item.rewriteEstimateUsd, source: 'estimated' };
        rewrite = estimate;
        // The key finds the item's stored rewrite (docs/enhance.md); withCost and the price ask for
        // what the call cost. Arguments only, so replay is unchanged.
        const price = item.rewritePrice ? { price: item.rewritePrice } : {};
        const asked = { settings, prompt, key: item.key, withCost: true, ...price };
        // One Messages call per prompt text, however many takes start together (workflows/rewrite.ts);
        // pages from older workers carry no rewriteId, and histories from before ask on their own.
        const shared = item.rewriteId !== undefined && hasPatch(ONE_REWRITE_PER_PROMPT_TEXT);
        const answer = await (
          shared ? rewriteAcrossTakes(input.jobWorkflowId, item.rewriteId!, asked) : calls.enhance.enhancePrompt(asked)
        ).catch(endedBy('enhance'));
        ({ prompt, cost: rewrite, at: rewriteAt } = enhancedOf(answer, estimate));
        enhanced = prompt;
      }
      status.phase = 'creating';
      created = await createWithPolicy(input, prompt, calls, sent);
      log.info('item created', { event: LogEvent.itemCreated, ...fields, taskId: created.taskId, baseUrl: created.baseUrl });
      Object.assign(status, { phase: 'rendering', taskId: created.taskId, baseUrl: created.baseUrl, createdAt: created.createdAt });
      pollingFrom = created.createdAt;
    }
    createdOn = created.baseUrl;

    // Workflows from before this change replay with the waits they had.
    const backOffWhenUnchanged = hasPatch('poll-backoff-on-unchanged-progress');
    const checkFallsBack = hasPatch('status-check-falls-back-to-activity');
    let firstProgress: ProgressSample | undefined;
    /** When (ms after creation) the progress last reported was first seen. */
    let readingSeenAt = 0;
    const deadline = pollingFrom + settings.polling.timeoutMs;
    // No item ends timed_out unless a check made at or after its deadline saw it unfinished: the
    // wait before the deadline's check was skipped, and a finished render was lost (docs/limits.md).
    const checksAtDeadline = hasPatch('last-status-check-at-deadline');
    let checkedAt = -Infinity;
    // A create that carried a callback address: the callback wakes the check, and polling is the
    // backstop for a lost one. Asked only then, so renders without callbacks replay unchanged.
    const woken = created.callbacks === true && hasPatch(CALLBACK_WAKES_STATUS_CHECK);
    while (check?.state !== 'succeeded') {
      const now = Date.now();
      if (now >= deadline && (!checksAtDeadline || checkedAt >= deadline))
        throw new ItemEnded(
          'timed_out',
          FailureType.timedOut,
          `not finished after ${settings.polling.timeoutMs / 1000} s (polling.timeout)`,
        );
      const delay = nextPollDelay({
        initialMs: settings.polling.initialMs,
        maxMs: settings.polling.maxMs,
        checks: status.polls,
        elapsedMs: now - created.createdAt,
        progress: check?.progress,
        firstProgress,
        serverHintMs: check?.pollAfterMs,
        medianRenderMs: input.medianRenderMs,
        unchangedForMs: backOffWhenUnchanged && check?.progress !== undefined ? now - created.createdAt - readingSeenAt : undefined,
      });
      if (now < deadline && woken) {
        // Settings recorded before polling.backstop existed carry no callbacks, so the default never applies to them.
        const backstop = Math.max(delay, settings.callbacks?.backstopMs ?? DEFAULT_BACKSTOP_MS);
        await condition(() => callbackHint, Math.min(backstop, deadline - now));
      } else if (now < deadline) await sleep(Math.min(delay, deadline - now));
      callbackHint = false;
      if (Date.now() >= deadline && !checksAtDeadline) continue;
      checkedAt = Date.now();
      const previous = check;
      check = await statusCheck(
        calls,
        { settings, taskId: created.taskId, protocol: item.request.protocol, createdAt: created.createdAt },
        checkFallsBack,
        fields,
      ).catch(endedBy('status check'));
      status.polls += 1;
      logStatusChange(fields, created.taskId, previous, check);
      if (check.progress !== status.progress) readingSeenAt = Date.now() - created.createdAt;
      status.progress = check.progress;
      if (!firstProgress && check.progress !== undefined && check.progress > 0) {
        firstProgress = { elapsedMs: Date.now() - created.createdAt, progress: check.progress };
      }
      status.baseUrl = check.baseUrl;
      if (check.state === 'succeeded') break;
      if (check.state === 'failed')
        throw new ItemEnded('failed', FailureType.renderFailed, check.failReason || 'the gateway reported the render as failed');
    }
    // A held task's time spans runs: it would mislead the model's median (polling hints).
    if (!held) renderMs = Date.now() - created.createdAt;
    status.phase = 'downloading';
    download = await calls.download
      .downloadVideo({
        settings,
        taskId: created.taskId,
        protocol: item.request.protocol,
        resultUrl: check?.resultUrl,
        // Data for the activity, no command of its own: histories from before it replay as they were.
        ...(check?.lastFrameUrl ? { lastFrameUrl: check.lastFrameUrl } : {}),
        outputName: item.outputName,
      })
      .catch(endedBy('download'));
    // A video from a CDN came through no base: the one that answered the last check stays.
    status.baseUrl = download.baseUrl ?? status.baseUrl;
    log.info('item downloaded', {
      event: LogEvent.itemDownloaded,
      ...fields,
      taskId: created.taskId,
      bytes: download.bytes,
      sha256: download.sha256,
      file: download.file,
      baseUrl: download.servedBy,
    });
  } catch (error) {
    if (isCancellation(error)) {
      ended = new ItemEnded(
        'canceled',
        FailureType.canceled,
        status.phase === 'creating'
          ? 'the job was canceled while the create was in flight: the gateway may have started (and billed) this render'
          : 'the job was canceled',
      );
    } else if (error instanceof ItemEnded) ended = error;
    else ended = endFromFailure(error, status.phase);
  }
  await permit?.release();

  // A gateway's figure below the user's price (a $0 header) would make renders free for the budget:
  // the charge is the higher of the two. Histories from before charged the figure as billed.
  const billedBelowPrice = sent.billedUsd !== undefined && item.estimateUsd !== undefined && sent.billedUsd < item.estimateUsd;
  const cost = costOf(sent, item.estimateUsd, billedBelowPrice && hasPatch('billed-never-below-price'));
  const outcome: ItemOutcome = {
    key: item.key,
    index: item.index,
    model: item.request.model,
    state: ended?.state ?? 'succeeded',
    renderMs,
    error: ended ? { kind: ended.kind, message: ended.message } : undefined,
    createsMaybeSent: sent.maybe,
    ...(cost ? { costUsd: cost.usd } : {}),
    ...(rewrite ? { rewriteCostUsd: rewrite.usd } : {}),
  };
  const endedLine = {
    event: LogEvent.itemEnded,
    ...fields,
    state: outcome.state,
    ...(status.taskId === undefined ? {} : { taskId: status.taskId }),
    polls: status.polls,
    ...(ended ? { kind: ended.kind, reason: bounded(ended.message) } : {}),
    ...(cost ? { costUsd: cost.usd } : {}),
  };
  if (outcome.state === 'succeeded' || outcome.state === 'canceled') log.info('item ended', endedLine);
  else log.warn('item ended', endedLine);
  // Nothing was created (no task of this run or an earlier one), and the cause is the job's: the
  // item is not started. No manifest row, so the next run after the fix renders it without
  // --retry-failed (docs/reruns.md). Workflows from before it replay the row they recorded.
  if (ended && status.taskId === undefined && jobWideCause(ended.kind) && hasPatch('job-wide-cause-leaves-item-not-started')) {
    outcome.notStarted = true;
    await CancellationScope.nonCancellable(() => getExternalWorkflowHandle(input.jobWorkflowId).signal(itemDoneSignal, outcome));
    return outcome;
  }
  // Recording and reporting must happen even when the job is being canceled.
  await CancellationScope.nonCancellable(async () => {
    status.phase = 'recording';
    const row: ManifestRow = {
      key: item.key,
      id: item.id ?? null,
      index: item.index,
      state: outcome.state,
      model: item.request.model,
      protocol: item.request.protocol,
      prompt: item.request.prompt,
      enhanced_prompt: enhanced ?? null,
      ...(item.requestDigest ? { request_digest: item.requestDigest } : {}),
      task_id: status.taskId ?? null,
      base_url: status.baseUrl ?? null,
      create_base_url: createdOn ?? null,
      download_base_url: download?.servedBy ?? null,
      created_at: status.createdAt ? new Date(status.createdAt).toISOString() : null,
      finished_at: new Date(Date.now()).toISOString(),
      polls: status.polls,
      file: download?.file ?? null,
      bytes: download?.bytes ?? null,
      sha256: download?.sha256 ?? null,
      ...(download?.lastFrame ? { last_frame: download.lastFrame } : {}),
      error: outcome.error ?? null,
      ...(cost ? { cost_usd: cost.usd, cost_source: cost.source } : {}),
      ...(rewrite ? { rewrite_cost_usd: rewrite.usd, rewrite_cost_source: rewrite.source } : {}),
      ...(rewrite && rewriteAt ? { rewrite_at: rewriteAt } : {}),
    };
    // The enhance model names the rewrite's spend in the metrics (activities/metrics.ts).
    const enhanceModel = rewrite && settings.enhance ? { enhanceModel: settings.enhance.model } : {};
    // The row's take, seed and what was asked are filled by the activity (docs/takes.md).
    await recording.recordItem({ output: settings.output, row, item: recordedItem(item), ...enhanceModel });
    await getExternalWorkflowHandle(input.jobWorkflowId).signal(itemDoneSignal, outcome);
  });
  return outcome;
}

type CheckInput = Parameters<ReturnType<typeof gatewayActivities>['check']['checkTask']>[0];

/**
 * The item's task from an earlier run, asked before anything is created: rendering or finished, it
 * is the item's task again (its row keeps the task id whatever happens next). Gone (task_not_found)
 * or failed: undefined, and the item is created afresh. Any other failure of the check ends the item
 * as a check's failure would, its task id kept for the next run. Asked only when the plan found a
 * held task, so workflows from before this replay unchanged.
 */
async function askHeldTask(
  prior: PriorTask,
  input: RenderInput,
  calls: ReturnType<typeof gatewayActivities>,
  status: RenderStatus,
): Promise<{ created: CreatedTaskInfo; check: TaskCheck } | undefined> {
  if (prior.protocol !== input.item.request.protocol || !hasPatch('ask-the-task-an-item-holds')) return undefined;
  Object.assign(status, { phase: 'rendering', taskId: prior.taskId, createdAt: prior.createdAt });
  let check: TaskCheck;
  try {
    check = await statusCheck(
      calls,
      { settings: input.settings, taskId: prior.taskId, protocol: prior.protocol, createdAt: prior.createdAt },
      true, // a workflow that asks a held task is newer than the fall-back
      itemFields(input),
    );
  } catch (error) {
    const failure = error instanceof ActivityFailure ? error.cause : error;
    if (!(failure instanceof ApplicationFailure && failure.type === FailureType.taskNotFound)) return endedBy('status check')(error);
    log.info('the task the item held is gone: creating it again', {
      event: LogEvent.itemHeldTask,
      ...itemFields(input),
      taskId: prior.taskId,
      outcome: 'gone',
    });
    Object.assign(status, { phase: 'pending', taskId: undefined, createdAt: undefined });
    return undefined;
  }
  status.polls += 1;
  if (check.state === 'failed') {
    log.info('the task the item held failed: creating it again', {
      event: LogEvent.itemHeldTask,
      ...itemFields(input),
      taskId: prior.taskId,
      outcome: 'failed',
      reason: bounded(check.failReason),
    });
    Object.assign(status, { phase: 'pending', taskId: undefined, createdAt: undefined });
    return undefined;
  }
  log.info('continuing the task the item held', {
    event: LogEvent.itemHeldTask,
    ...itemFields(input),
    taskId: prior.taskId,
    outcome: 'continued',
    state: check.state,
  });
  return { created: { taskId: prior.taskId, baseUrl: prior.baseUrl ?? check.baseUrl, createdAt: prior.createdAt }, check };
}

/**
 * One status check. A local activity is cheap in history but runs inside a workflow task, so it
 * gets a few seconds and one attempt; a check that fails or needs longer (an outage, failover, a
 * 429 wait) is made again as a regular activity with the full retry budget. Workflows from before
 * that change replay their long local checks (`checkLocal`).
 */
async function statusCheck(
  calls: ReturnType<typeof gatewayActivities>,
  input: CheckInput,
  fallsBack: boolean,
  fields: ReturnType<typeof itemFields>,
): Promise<TaskCheck> {
  if (!fallsBack) return calls.checkLocal.checkTask(input);
  try {
    return await calls.quickCheck.checkTask(input);
  } catch (error) {
    // A failed local activity may arrive as its ApplicationFailure itself, not wrapped.
    const failure = error instanceof ActivityFailure ? error.cause : error;
    if (isCancellation(error) || (failure instanceof ApplicationFailure && failure.nonRetryable)) throw error;
    log.debug('status check moved to a regular activity', {
      event: LogEvent.itemCheckMoved,
      ...fields,
      taskId: input.taskId,
      reason: bounded((failure as Error | undefined)?.message),
    });
    return calls.check.checkTask(input);
  }
}

/** Creates again after a create that provably sent nothing, at most this many times per item. */
const UNSENT_CREATE_RETRIES = 5;

/**
 * Whether a failed create activity provably sent no request: it said so, or it timed out without
 * the heartbeat it has the server record before sending (activities/create-marker.ts). That covers
 * an activity task Temporal lost on its way to a worker, and a worker that died before sending.
 */
function createProvablyNotSent(error: unknown): boolean {
  const failure = error instanceof ActivityFailure ? error.cause : undefined;
  if (failure instanceof ApplicationFailure) return failure.type === FailureType.createNotSent;
  return failure instanceof TimeoutFailure && failure.lastHeartbeatDetails === undefined;
}

/** The creates of one item that may have been billed, and what the gateway said the one that answered cost. */
interface CreatesSent {
  maybe: number;
  billedUsd?: number;
}

/**
 * What this run of the item cost (its row's cost_usd, docs/costs.md): the gateway's figure for the
 * create that answered when it gave one (`billed`), and the estimate for every other create that
 * may have been sent (then the whole is `estimated`). Nothing to say without either. With
 * `atLeastPrice`, a figure below the estimate is not believed: that create costs its estimate
 * (`estimated`), so a gateway cannot lower what the budget counts.
 */
function costOf(
  sent: CreatesSent,
  estimateUsd: number | undefined,
  atLeastPrice = false,
): { usd: number; source: 'billed' | 'estimated' } | undefined {
  const billed =
    atLeastPrice && sent.billedUsd !== undefined && estimateUsd !== undefined && sent.billedUsd < estimateUsd ? undefined : sent.billedUsd;
  const unbilled = sent.maybe - (billed === undefined ? 0 : 1);
  if (billed === undefined && estimateUsd === undefined) return undefined;
  const usd = roundUsd((billed ?? 0) + (estimateUsd ?? 0) * unbilled);
  return { usd, source: billed !== undefined && unbilled === 0 ? 'billed' : 'estimated' };
}

/**
 * Creates the item's task. `sent.maybe` counts the creates that may have reached the gateway and
 * so may be billed: one that answered, one whose outcome is unknown, one in flight when the job
 * was canceled. Not one that provably sent nothing, nor one the gateway refused.
 */
async function createWithPolicy(input: RenderInput, prompt: string, calls: ReturnType<typeof gatewayActivities>, sent: CreatesSent) {
  const request = { ...input.item.request, prompt };
  // `retries.create: always` accepts paying twice for a lost response; `safe` never does.
  const attempts = input.settings.retries.create === 'always' ? 3 : 1;
  // Workflows from before the marker replay their `createTask` calls and end a timed-out create unknown.
  const marked = hasPatch('create-again-when-provably-unsent');
  const create = () =>
    marked
      ? calls.createMarked.createTaskMarked({ settings: input.settings, request })
      : calls.create.createTask({ settings: input.settings, request });
  // Creates that may have been sent count against `attempts`; provably unsent ones only against their own bound.
  let attempt = 1;
  let unsent = 0;
  for (;;) {
    try {
      const created = await create();
      sent.maybe += 1;
      if (created.billedUsd !== undefined) sent.billedUsd = created.billedUsd;
      return created;
    } catch (error) {
      const unsentForSure = marked && createProvablyNotSent(error);
      if (isCancellation(error) || (!unsentForSure && endFromFailure(error, 'create').state === 'unknown')) sent.maybe += 1;
      if (isCancellation(error)) throw error;
      if (marked && createProvablyNotSent(error)) {
        if (unsent >= UNSENT_CREATE_RETRIES) {
          throw new ItemEnded(
            'failed',
            FailureType.createNotSent,
            `the create was never sent, in ${unsent + 1} tries (the last ${describe(error)})`,
          );
        }
        unsent += 1;
        log.warn('create sent nothing; creating again', {
          event: LogEvent.itemCreateRetried,
          ...itemFields(input),
          reason: bounded(describe(error)),
          retry: unsent,
        });
        await sleep(1_000 * unsent);
        continue;
      }
      const ended = endFromFailure(error, 'create');
      if (ended.state !== 'unknown' || attempt >= attempts) throw ended;
      await sleep(2_000 * attempt);
      attempt += 1;
    }
  }
}

/**
 * item.status: a change of the task's state (info), or of its progress alone (debug). `previous` is
 * the check before (none: the task was just created).
 */
function logStatusChange(fields: ReturnType<typeof itemFields>, taskId: string, previous: TaskCheck | undefined, check: TaskCheck): void {
  const from = previous?.state ?? 'created';
  if (from === check.state && previous?.progress === check.progress) return;
  const line = { event: LogEvent.itemStatus, ...fields, taskId, from, to: check.state, progress: check.progress };
  if (from !== check.state) log.info('item status', line);
  else log.debug('item status', line);
}

function describe(error: unknown): string {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  if (failure instanceof TimeoutFailure) return `timed out (${failure.timeoutType}) before sending anything`;
  return (failure as Error | undefined)?.message ?? String(error);
}
