// JobWorkflow: the sliding window (Temporal's batch-sliding-window sample is the model). It keeps
// max_in_flight RenderWorkflow children running; children are abandoned and report back by signal
// to this workflow's id, so continue-as-new loses none of them.
import {
  ActivityFailure,
  CancellationScope,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { FailureType, jobWideCause, type FailureKind } from '../domain/failures';
import { bounded, LogEvent } from '../activities/log-events';
import type { ItemWorkflowState } from '../activities/item-workflow';
import type { PageItem } from '../activities/plan';
import { itemChargeUsd, roundUsd } from '../domain/money';
import { bookkeeping } from './activities';
import { recordBlocked } from './blocked-rows';
import { assembleFilms } from './assemble';
import { renderWorkflowId } from './ids';
import { JobEvents } from './notify';
import { hasPatch } from './patches';
import { RenderWorkflow, itemDoneSignal } from './render';
import { NeedsWindow } from './chain';
import { emptyCounts, endedCount, type ItemEndState } from '../domain/end-states';
import type { ItemOutcome, JobCarry, JobInput, JobProgress, JobResult, JobStopCause } from './types';

export const progressQuery = defineQuery<JobProgress>('progress');
export const cancelSignal = defineSignal<[string?]>('cancel');

/** Most items per page of the plan; the page activity also stops at a byte bound (jobfile/item-size.ts). */
const PAGE_SIZE = 100;
/** An item whose id its workflow from an earlier run holds: the job learns that workflow's state (freeHeldId). */
const HELD_ITEM_ID = 'already-started-child-asks-its-state';
/** Default bound on events per run, well under Temporal's 50k and the 10k this project allows. */
const HISTORY_BUDGET = 8_000;
const MEDIAN_WINDOW = 25;
const RECENT_FAILURES = 20;
/**
 * Jobs from before it replay as they ran: only auth and missing_key stopped them, by canceling the
 * items in flight. With it, every job-wide cause stops the job (domain/failures.ts), the
 * items in flight finish, and `retries.stop_after_failures` identical item failures stop it too.
 */
const STOPS_LET_IN_FLIGHT_FINISH = 'job-wide-stop-lets-in-flight-finish';
/** How much of a failure's message tells two failures apart (stop_after_failures). */
const ALIKE_MESSAGE_CHARS = 200;
/** Distinct failures counted at once: the carry stays small however varied the failures are. */
const ALIKE_KINDS_KEPT = 20;
/**
 * With it, a job with a budget reserves each item's estimate before it starts the item's workflow
 * and starts no item that would cross budget.max_usd (docs/costs.md). Jobs from before it replay
 * without a budget.
 */
const BUDGET_RESERVES = 'budget-reserved-before-each-item-starts';
/**
 * With it, an item's reservation holds its prompt rewrite's estimate too, when its page says the
 * rewrite is not stored yet (PageItem.rewriteEstimateUsd). Jobs from before it replay without.
 */
const BUDGET_RESERVES_REWRITES = 'budget-reserves-prompt-rewrites';
/**
 * With it, the window counts items by their place in the run's plan (PageItem.position), not by
 * their `index`, which the takes of one prompt share and which a redo run's takes keep from the
 * whole job: counts and the cursor stay within the plan, and a run continued as new reads on from
 * the right place. A budget stop names an item that alone costs more than the whole budget.
 * Jobs from before it replay as they ran.
 */
const ITEM_POSITIONS = 'items-counted-by-their-place-in-the-plan';
/** Creates per item that `retries.create: always` may send (workflows/render.ts createWithPolicy). */
const ALWAYS_CREATE_ATTEMPTS = 3;
/** With it, a job with notify targets sends job events (workflows/notify.ts, docs/notifications.md). */
const JOB_EVENTS = 'job-events-out';
/**
 * With it, an item that needs others (docs/chains.md) waits for them in the window's "not ready
 * yet" set and ends `blocked` when one does not succeed. Asked only when such an item comes up:
 * every other job's history is as before.
 */
const ITEMS_WAIT_FOR_NEEDS = 'items-wait-for-their-needs';
/**
 * With it, an item that ends blocked gets its manifest row (state `blocked`, `blocked_by` the need),
 * a local activity, so `results`, the report and a later run read it like any ended item. Asked
 * once per run, at its first blocked item: every other job's history is as before.
 */
const BLOCKED_ITEMS_RECORDED = 'blocked-items-get-a-manifest-row';

type Page = Awaited<ReturnType<typeof bookkeeping.readPlanItems>>;

export async function JobWorkflow(input: JobInput): Promise<JobResult> {
  // Reading the plan can take a while (a large job file, references hashed, the gateway's prices):
  // `run` and `status` show the job preparing meanwhile, not nothing. A query adds nothing to history.
  if (!input.carry) setHandler(progressQuery, () => preparingProgress());
  const job = new Job(input, input.carry ?? (await firstRun(input)));
  // Workflow log lines are not written again when the history is replayed, and add no events to it.
  if (!input.carry) {
    log.info('job started', {
      event: LogEvent.jobStarted,
      jobId: workflowInfo().workflowId,
      job: job.settings.job,
      items: job.carry.prepared.itemCount,
      // Where each price came from (docs/costs.md): a scheduled run's worker read the gateway's itself.
      ...(job.carry.prepared.priceSources ? { prices: job.carry.prepared.priceSources } : {}),
    });
  }
  job.newStops = hasPatch(STOPS_LET_IN_FLIGHT_FINISH);
  job.positions = hasPatch(ITEM_POSITIONS);
  job.startBudget();
  const events = new JobEvents(job.carry, workflowInfo().workflowId);
  job.events = events;
  // Only jobs with targets ask the patch: every other job's history is as before.
  const targets = JobEvents.targets(job.settings.notify, input.notify);
  if (!input.carry && targets.length > 0 && hasPatch(JOB_EVENTS)) await events.start(targets);
  setHandler(itemDoneSignal, (outcome) => job.reported(outcome));
  setHandler(cancelSignal, () => {
    job.carry.canceled = true;
  });
  setHandler(progressQuery, () => job.progress());

  let next: 'done' | 'continue-as-new';
  try {
    next = (await job.fillWindow()) === 'continue-as-new' ? 'continue-as-new' : await job.drainWindow();
  } catch (error) {
    // Canceled through Temporal itself (its UI, `temporal workflow cancel`): job.ended still goes out.
    if (isCancellation(error)) await CancellationScope.nonCancellable(() => events.ended(true));
    throw error;
  }
  if (next === 'continue-as-new') return job.continueAsNew();
  job.state = 'completed';
  await condition(allHandlersFinished);
  await job.blockedRecorded();
  // The films of `assemble:`, once every clip has ended (workflows/assemble.ts; none: nothing asked).
  const films = await assembleFilms(job.settings, job.carry.canceled);
  // The manifest as one file at the output location (S3: manifest.jsonl beside the row objects).
  // Every way a job ends passes here: all items ended, canceled by `reelflow cancel`, stopped on a
  // fatal error, and the last run after continue-as-new. Best effort: every item's row is already
  // stored, the next run of the job writes it again, and it must not fail a job whose items ended.
  if (hasPatch('manifest-snapshot-at-end')) {
    await bookkeeping.snapshotManifest({ output: job.settings.output }).catch((error: unknown) => {
      log.warn('could not leave manifest.jsonl at the output location', {
        event: LogEvent.jobManifestNotLeft,
        jobId: workflowInfo().workflowId,
        reason: bounded((error as Error | undefined)?.message),
      });
    });
  }
  // Started, never awaited: a delivery neither delays nor fails the job's outcome.
  await events.ended();
  const { carry } = job;
  log.info('job ended', {
    event: LogEvent.jobEnded,
    jobId: workflowInfo().workflowId,
    job: job.settings.job,
    total: carry.prepared.itemCount,
    counts: carry.counts,
    canceled: carry.canceled,
    runs: carry.runs,
    ...(carry.stoppedBy ? { stoppedBy: carry.stoppedBy.kind } : {}),
  });
  return {
    job: job.settings.job,
    total: carry.prepared.itemCount,
    counts: carry.counts,
    startedAt: carry.startedAt,
    finishedAt: Date.now(),
    fatal: carry.fatal,
    ...(carry.stoppedBy ? { stoppedBy: carry.stoppedBy } : {}),
    // Items a stop left waiting for their needs were passed by the cursor, and never started.
    notStarted:
      carry.prepared.itemCount -
      carry.cursor +
      (carry.notStarted ?? 0) +
      (carry.chain ? carry.chain.waiting.length + carry.chain.ready.length : 0),
    canceled: carry.canceled,
    ...(carry.budget ? { spentUsd: carry.budget.spentUsd } : {}),
    ...(films ? { films } : {}),
    ...(carry.chain && carry.chain.blocked.length > 0 ? { blocked: carry.chain.blocked } : {}),
  };
}

async function firstRun(input: JobInput): Promise<JobCarry> {
  return {
    prepared: await bookkeeping.preparePlan({
      jobFile: input.jobFile,
      runDate: input.runDate,
      startedAt: Date.now(),
      ...(input.inputs ? { inputs: input.inputs } : {}),
      workflowId: workflowInfo().workflowId,
      ...(input.keyFingerprint ? { keyFingerprint: input.keyFingerprint } : {}),
      ...(input.budgetUsd !== undefined ? { budgetUsd: input.budgetUsd } : {}),
      // Only redo runs carry it: every other job's plan activities are called as before.
      ...(input.redo ? { redo: input.redo } : {}),
      ...(input.prices ? { prices: input.prices } : {}),
      // Only jobs whose user allowed reads outside the folder carry it: the others' inputs are as before.
      ...(input.allowRead ? { allowRead: input.allowRead } : {}),
    }),
    cursor: 0,
    counts: emptyCounts(),
    inFlight: {},
    renderSamples: {},
    recentFailures: [],
    startedAt: Date.now(),
    lastCreateAt: 0,
    canceled: false,
    runs: 1,
  };
}

/** One run of the job: what it carries across continue-as-new, and the window's moves. */
class Job {
  state: JobProgress['state'] = 'running';
  readonly settings: JobCarry['prepared']['settings'];
  private readonly self = workflowInfo().workflowId;
  private readonly historyBudget: number;
  /** Outcomes that arrived before their startChild call returned (a child can finish that fast). */
  private readonly early = new Map<string, ItemOutcome>();
  private readonly canceledInFlight = new Set<string>();
  /** hasPatch(BUDGET_RESERVES_REWRITES), asked once at the start of each run that has a budget. */
  private reservesRewrites = false;
  /** hasPatch(STOPS_LET_IN_FLIGHT_FINISH), asked once at the start of each run. */
  newStops = false;
  /** hasPatch(ITEM_POSITIONS), asked once at the start of each run. */
  positions = false;
  /** The job's notification events (workflows/notify.ts); they start nothing for a job without targets. */
  events?: JobEvents;
  /** hasPatch(ITEMS_WAIT_FOR_NEEDS), asked once per run when an item that needs another comes up. */
  private chainsPatched?: boolean;
  /** The window's "not ready yet" set, once an item that needs another came up (workflows/chain.ts). */
  private chain?: NeedsWindow;
  /** hasPatch(BLOCKED_ITEMS_RECORDED), asked once per run at its first blocked item. */
  private blockedRows?: boolean;
  /** The blocked items' rows being written: awaited before the run ends or continues as new. */
  private readonly blockedRecordings: Array<Promise<void>> = [];

  constructor(
    private readonly input: JobInput,
    readonly carry: JobCarry,
  ) {
    this.settings = carry.prepared.settings;
    this.historyBudget = input.historyBudget ?? HISTORY_BUDGET;
  }

  private stopping(): boolean {
    return this.carry.canceled || this.carry.fatal !== undefined;
  }

  /** A cancel ends the items in flight; a stop lets them finish (before the patch it ended them too). */
  private cancelingInFlight(): boolean {
    return this.carry.canceled || (this.carry.fatal !== undefined && !this.newStops);
  }

  private inFlightCount(): number {
    return Object.keys(this.carry.inFlight).length;
  }

  private historyFull(): boolean {
    return workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > this.historyBudget;
  }

  /**
   * Starts items page by page while the window has room, until all are started or the job stops.
   * Items that need others (docs/chains.md) wait in the chain's "not ready yet" set, passed by the
   * cursor, and start from its ready list once their needs succeeded (workflows/chain.ts).
   */
  async fillWindow(): Promise<'done' | 'continue-as-new'> {
    const { carry, settings } = this;
    let page: Page | undefined;
    let pageAt = 0;
    if (carry.chain) this.chainsOn();
    while (!this.stopping() && (carry.cursor < carry.prepared.itemCount || this.chainPending())) {
      const ready = carry.chain?.ready ?? [];
      if (ready.length === 0 && this.chain) {
        if (page) pageAt = this.passUnready(page, pageAt);
        const endOfPlan = carry.cursor >= carry.prepared.itemCount && (!page || pageAt >= page.items.length);
        if (endOfPlan || this.chain.full()) {
          // Nothing to read on (or no room to hold more): wait for a need to end.
          await condition(() => this.stopping() || this.chainMoved(endOfPlan) || this.historyFull());
          if (this.stopping()) break;
          if (!this.chainMoved(endOfPlan)) return 'continue-as-new';
          continue;
        }
      }
      if (ready.length === 0 && page && pageAt >= page.items.length) {
        // Whatever this page did not return was already done: count it as skipped.
        carry.counts.skipped += page.nextOffset - carry.cursor;
        carry.cursor = page.nextOffset;
        page = undefined;
        continue;
      }
      if (ready.length === 0 && !page) {
        const prices = this.input.prices ?? carry.prepared.prices;
        page = await bookkeeping.readPlanItems({
          jobFile: this.input.jobFile,
          runDate: carry.prepared.runDate,
          digest: carry.prepared.digest,
          offset: carry.cursor,
          limit: PAGE_SIZE,
          retryStates: this.input.retryStates ?? [],
          output: settings.output,
          ...(this.input.inputs ? { inputs: this.input.inputs } : {}),
          ...(this.input.redo ? { redo: this.input.redo } : {}),
          // `run`'s prices, else those the plan's worker read from the gateway (a schedule's run): the
          // activity's input only, the same commands (a run from before has neither).
          ...(prices ? { prices } : {}),
          ...(this.input.allowRead ? { allowRead: this.input.allowRead } : {}),
        });
        pageAt = 0;
        continue;
      }
      await condition(() => this.stopping() || this.inFlightCount() < settings.concurrency.maxInFlight);
      if (this.stopping()) break;
      const cpm = settings.concurrency.createsPerMinute;
      if (cpm) {
        // creates_per_minute: children create right after they start, so pace the starts.
        const wait = carry.lastCreateAt + 60_000 / cpm - Date.now();
        if (wait > 0) await sleep(wait);
        carry.lastCreateAt = Date.now();
      }
      // Fill every free slot in this one workflow task: the starts go out together, so a window of
      // 100 fills in one or two server round trips instead of one round trip per child.
      const free = cpm ? 1 : settings.concurrency.maxInFlight - this.inFlightCount();
      const fromReady = ready.slice(0, free);
      let batch = [...fromReady, ...this.startable(page?.items ?? [], pageAt, free - fromReady.length)];
      if (batch.length === 0) continue;
      if (carry.budget) {
        batch = this.affordable(batch);
        if (batch.length === 0) {
          const first = fromReady[0] ?? page!.items[pageAt]!;
          const next = await this.waitForBudget(first);
          if (next === 'continue-as-new') return next;
          if (next === 'reached') this.stopForBudget(first);
          continue;
        }
      }
      const readyTaken = Math.min(fromReady.length, batch.length);
      ready.splice(0, readyTaken);
      pageAt += batch.length - readyTaken;
      for (const [n, item] of batch.entries()) {
        if (n >= readyTaken) this.pass(item);
        carry.inFlight[renderWorkflowId(this.self, item.key)] = {
          key: item.key,
          index: item.index,
          model: item.request.model,
          ...(carry.budget ? { reservedUsd: this.reservation(item) } : {}),
          ...(item.neededBy && this.chain ? { neededBy: true } : {}),
        };
      }
      await Promise.all(batch.map((item) => this.startRender(item)));
      if (this.historyFull()) return 'continue-as-new';
    }
    return 'done';
  }

  /** Moves the cursor onto `item`: the items between were filtered out of the page as already done. */
  private pass(item: PageItem): void {
    const place = this.placeOf(item);
    this.carry.counts.skipped += place - 1 - this.carry.cursor;
    this.carry.cursor = place;
  }

  /**
   * The items of the page from `at` that may start now, at most `room`: without the chains, the
   * next ones; with them, up to the first that needs another, which passUnready decides once the
   * items before it are in flight (a need started in the same batch would look unknown).
   */
  private startable(items: readonly PageItem[], at: number, room: number): PageItem[] {
    const next = items.slice(at, at + Math.max(0, room));
    if (!this.chain && !next.some((item) => item.needs?.length)) return next;
    if (!this.chainsOn()) return next;
    const first = next.findIndex((item, n) => (n > 0 || !this.chainReady(item)) && (item.needs?.length ?? 0) > 0);
    return first < 0 ? next : next.slice(0, first);
  }

  /** The first item of `startable` may have needs: it is ready only when every one succeeded. */
  private chainReady(item: PageItem): boolean {
    const now = this.chain!.readiness(item);
    return 'ready' in now && now.ready;
  }

  /**
   * Passes the items at the head of the page that need others and are not ready: each waits in the
   * chain's set, or ends blocked; stops at a ready item or when the set is full.
   */
  private passUnready(page: Page, at: number): number {
    const chain = this.chain!;
    let pageAt = at;
    while (pageAt < page.items.length && !chain.full()) {
      const item = page.items[pageAt]!;
      if (!item.needs?.length) break;
      const now = chain.readiness(item);
      if ('ready' in now && now.ready) break;
      this.pass(item);
      pageAt += 1;
      if ('blockedBy' in now) this.block(item, now.blockedBy, now.why);
      else chain.hold(item);
    }
    return pageAt;
  }

  /** hasPatch(ITEMS_WAIT_FOR_NEEDS), asked once per run when the first item that needs another comes up. */
  private chainsOn(): boolean {
    if (this.chainsPatched === undefined) {
      this.chainsPatched = hasPatch(ITEMS_WAIT_FOR_NEEDS);
      if (this.chainsPatched) {
        this.carry.chain ??= { waiting: [], ready: [], outcomes: {}, blocked: [] };
        this.chain = new NeedsWindow(this.carry.chain, () => this.keysInFlight());
      }
    }
    return this.chainsPatched;
  }

  private *keysInFlight(): Iterable<string> {
    for (const v of Object.values(this.carry.inFlight)) yield v.key;
  }

  /** Items of the chain waiting or ready to start. */
  private chainPending(): boolean {
    const chain = this.carry.chain;
    return chain !== undefined && chain.waiting.length + chain.ready.length > 0;
  }

  /** The wait for a need to end is over: an item is ready, or (at the end of the plan) none waits, or the set has room. */
  private chainMoved(endOfPlan: boolean): boolean {
    const chain = this.carry.chain!;
    return chain.ready.length > 0 || (endOfPlan ? chain.waiting.length === 0 : !this.chain!.full());
  }

  /** A need ended: the items waiting on it become ready or blocked, and blocked ones block their own dependents. */
  private needEnded(item: Pick<PageItem, 'key' | 'neededBy'>, state: ItemEndState): void {
    const chain = this.chain;
    if (!chain) return;
    chain.ended(item, state);
    for (;;) {
      const { ready, blocked } = chain.settle();
      this.carry.chain!.ready.push(...ready);
      for (const b of blocked) this.block(b.item, b.blockedBy, b.why);
      if (blocked.length === 0) return;
    }
  }

  /** Ends an item that was never started: a need of it did not succeed. */
  private block(item: PageItem, blockedBy: string, why: string): void {
    const { carry } = this;
    carry.counts.blocked = (carry.counts.blocked ?? 0) + 1;
    const list = carry.chain!.blocked;
    list.push({ key: item.key, blockedBy, why });
    if (list.length > RECENT_FAILURES) list.shift();
    const message = `blocked: ${why}`;
    carry.recentFailures.push({
      key: item.key,
      index: item.index,
      model: item.request.model,
      state: 'blocked',
      error: { kind: FailureType.blocked, message },
    });
    if (carry.recentFailures.length > RECENT_FAILURES) carry.recentFailures.shift();
    this.chain!.ended(item, 'blocked', blockedBy);
    this.blockedRows ??= hasPatch(BLOCKED_ITEMS_RECORDED);
    if (this.blockedRows) this.blockedRecordings.push(recordBlocked(this.settings.output, item, blockedBy, why));
  }

  /** Every blocked item's row is written (before the run ends or continues as new). */
  async blockedRecorded(): Promise<void> {
    while (this.blockedRecordings.length > 0) await Promise.all(this.blockedRecordings.splice(0));
  }

  /**
   * A job with a budget (the job file's or `run --budget`'s) carries what it spent from its first
   * run on: the earlier runs' spend that the plan read from the manifest, and the items' spend as
   * they end. Jobs from before the patch run without.
   */
  startBudget(): void {
    const { carry } = this;
    if (!carry.budget) {
      if (this.settings.budget === undefined || !hasPatch(BUDGET_RESERVES)) return;
      carry.budget = { maxUsd: this.settings.budget.maxUsd, spentUsd: carry.prepared.spentUsd ?? 0 };
    }
    this.reservesRewrites = hasPatch(BUDGET_RESERVES_REWRITES);
  }

  /** What the job would spend at most if every item in flight were billed: spent plus reserved. */
  private committedUsd(): number {
    const reserved = Object.values(this.carry.inFlight).reduce((sum, v) => sum + (v.reservedUsd ?? 0), 0);
    return roundUsd((this.carry.budget?.spentUsd ?? 0) + reserved);
  }

  /**
   * An item's reservation: its estimate for each create it may send (`retries.create: always` sends
   * up to 3), and its prompt rewrite's when that is not stored yet (one Messages call, made once).
   */
  private reservation(item: PageItem): number {
    const attempts = this.settings.retries.create === 'always' ? ALWAYS_CREATE_ATTEMPTS : 1;
    const rewrite = this.reservesRewrites ? (item.rewriteEstimateUsd ?? 0) : 0;
    return roundUsd((item.estimateUsd ?? 0) * attempts + rewrite);
  }

  private fits(item: PageItem, committed = this.committedUsd()): boolean {
    return roundUsd(committed + this.reservation(item)) <= this.carry.budget!.maxUsd;
  }

  /** The longest head of `batch` the budget can reserve now, in order: an item that does not fit ends it. */
  private affordable(batch: PageItem[]): PageItem[] {
    let committed = this.committedUsd();
    let n = 0;
    while (n < batch.length && this.fits(batch[n]!, committed)) {
      committed = roundUsd(committed + this.reservation(batch[n]!));
      n += 1;
    }
    return batch.slice(0, n);
  }

  /**
   * The next item does not fit now. The items in flight may give reservations back as they end (a
   * create that sent nothing, a held task resumed): wait for that, or for the window to drain.
   */
  private async waitForBudget(item: PageItem): Promise<'fits' | 'reached' | 'stopping' | 'continue-as-new'> {
    await condition(
      () => this.stopping() || this.fits(item) || this.inFlightCount() === 0 || workflowInfo().historyLength > this.historyBudget,
    );
    if (this.stopping()) return 'stopping';
    if (this.fits(item)) return 'fits';
    return this.inFlightCount() === 0 ? 'reached' : 'continue-as-new';
  }

  /** Where the item is in this run's plan, 1-based: the cursor's unit (ITEM_POSITIONS). */
  private placeOf(item: PageItem): number {
    return this.positions && item.position !== undefined ? item.position : item.index;
  }

  private stopForBudget(item: PageItem): void {
    const { carry } = this;
    const budget = carry.budget!;
    const notStarted = carry.prepared.itemCount - this.placeOf(item) + 1 + (carry.notStarted ?? 0);
    const alone = this.reservation(item);
    if (this.positions && alone > budget.maxUsd) {
      // No raise of a sensible size helps: most often a price that is wrong (a typo, per second read as per video).
      this.stop({
        kind: FailureType.budgetReached,
        message:
          `budget reached: ${item.key} alone is estimated at ${usd(alone)}, more than the whole budget of ${usd(budget.maxUsd)} ` +
          `(${usd(this.committedUsd())} spent or reserved); ${notStarted} items not started`,
        fix: `check the price of ${item.request.model} (pricing: in the job file, --prices, the gateway's), or raise budget.max_usd (run --budget USD) above ${usd(alone)}`,
        exitCode: 1,
      });
      return;
    }
    this.stop({
      kind: FailureType.budgetReached,
      message: `budget reached: ${usd(this.committedUsd())} of ${usd(budget.maxUsd)} spent or reserved; ${notStarted} items not started; raise budget.max_usd and run again`,
      fix: 'raise budget.max_usd in the job file (or run --budget USD) and run the job again: the items already rendered are not paid again',
      exitCode: 1,
    });
  }

  /** Waits for the window to drain, canceling in-flight children once the job is canceled. */
  async drainWindow(): Promise<'done' | 'continue-as-new'> {
    while (this.inFlightCount() > 0) {
      if (this.stopping()) this.state = this.carry.canceled ? 'canceling' : 'stopping';
      if (this.cancelingInFlight()) await this.cancelInFlight();
      await condition(
        () =>
          this.inFlightCount() === 0 ||
          workflowInfo().historyLength > this.historyBudget ||
          (this.stopping() && this.state === 'running') ||
          (this.cancelingInFlight() && Object.keys(this.carry.inFlight).some((id) => !this.canceledInFlight.has(id))),
      );
      // Long waits continue as new too, so history stays bounded.
      if (this.inFlightCount() > 0 && workflowInfo().historyLength > this.historyBudget) return 'continue-as-new';
    }
    return 'done';
  }

  async continueAsNew(): Promise<never> {
    await condition(allHandlersFinished);
    await this.blockedRecorded();
    await this.events?.settled();
    log.info('job continues as new', {
      event: LogEvent.jobContinuedAsNew,
      jobId: this.self,
      run: this.carry.runs + 1,
      cursor: this.carry.cursor,
      inFlight: this.inFlightCount(),
      counts: this.carry.counts,
    });
    return continueAsNew<typeof JobWorkflow>({ ...this.input, carry: { ...this.carry, runs: this.carry.runs + 1 } });
  }

  /** A child's outcome, by signal; it may come before its startChild call has returned. */
  reported(outcome: ItemOutcome): void {
    const id = renderWorkflowId(this.self, outcome.key);
    if (this.carry.inFlight[id]) this.settle(id, outcome);
    else this.early.set(id, outcome);
  }

  progress(): JobProgress {
    const { carry } = this;
    const { counts, prepared } = carry;
    const done = endedCount(counts);
    const inFlight = Object.entries(carry.inFlight).map(([workflowId, v]) => ({ workflowId, ...v }));
    const elapsed = Date.now() - carry.startedAt;
    const notStarted = carry.notStarted ?? 0;
    const chain = carry.chain;
    const waiting = chain ? [...chain.ready, ...chain.waiting] : [];
    const remaining = prepared.itemCount - done - counts.skipped;
    return {
      job: this.settings.job,
      state: carry.canceled && this.state === 'running' ? 'canceling' : this.state,
      total: prepared.itemCount,
      started: carry.cursor,
      runs: carry.runs,
      fatal: carry.fatal,
      ...(carry.stoppedBy ? { stoppedBy: carry.stoppedBy } : {}),
      ...(notStarted > 0 ? { notStarted } : {}),
      startedAt: carry.startedAt,
      counts: {
        ...counts,
        in_flight: inFlight.length,
        pending: Math.max(0, prepared.itemCount - carry.cursor) + notStarted + waiting.length,
      },
      inFlight,
      ...(waiting.length > 0 && this.chain
        ? { waiting: waiting.map((item) => ({ key: item.key, waitsOn: this.chain!.waitsOn(item) })) }
        : {}),
      ...(chain && chain.blocked.length > 0 ? { blocked: chain.blocked } : {}),
      recentFailures: carry.recentFailures,
      etaMs: done > 0 && remaining > 0 ? Math.round((elapsed / done) * remaining) : undefined,
    };
  }

  private settle(workflowId: string, outcome: ItemOutcome): void {
    const { carry } = this;
    const reservedUsd = carry.inFlight[workflowId]?.reservedUsd;
    const neededBy = carry.inFlight[workflowId]?.neededBy;
    delete carry.inFlight[workflowId];
    if (carry.budget) carry.budget.spentUsd = roundUsd(carry.budget.spentUsd + spentBy(outcome, reservedUsd));
    if (outcome.notStarted) carry.notStarted = (carry.notStarted ?? 0) + 1;
    else carry.counts[outcome.state] = (carry.counts[outcome.state] ?? 0) + 1;
    // An item left not started (a job-wide cause) ends nothing: the job stops, its dependents wait.
    if (neededBy && !outcome.notStarted) this.needEnded({ key: outcome.key, neededBy }, outcome.state);
    this.events?.itemEnded(outcome);
    if (outcome.renderMs !== undefined) {
      const samples = (carry.renderSamples[outcome.model] ??= []);
      samples.push(outcome.renderMs);
      if (samples.length > MEDIAN_WINDOW) samples.shift();
    }
    if (outcome.state === 'succeeded') {
      if (this.newStops) carry.alikeFailures = {};
      return;
    }
    carry.recentFailures.push(outcome);
    if (carry.recentFailures.length > RECENT_FAILURES) carry.recentFailures.shift();
    const { error } = outcome;
    if (!error || carry.fatal !== undefined) return;
    if (!this.newStops) {
      // As jobs from before the patch ran: only a refused or missing key stopped them.
      if (error.kind === FailureType.auth || error.kind === FailureType.missingKey) carry.fatal = error.message;
      return;
    }
    const cause = jobWideCause(error.kind);
    if (cause) return this.stop({ kind: error.kind, message: error.message, fix: cause.fix, exitCode: cause.exitCode });
    if (outcome.state === 'failed') this.countAlike(error);
  }

  /**
   * retries.stop_after_failures: the same item-level failure (kind and message, numbers and ids
   * aside) on that many items since the last success stops the job, e.g. a content policy that
   * refuses every prompt of the job.
   */
  private countAlike(error: { kind: FailureKind; message: string }): void {
    const limit = this.settings.retries.stopAfterFailures ?? 0;
    if (limit <= 0) return;
    const alike = (this.carry.alikeFailures ??= {});
    const key = `${error.kind}: ${normalizedMessage(error.message)}`;
    if (alike[key] === undefined && Object.keys(alike).length >= ALIKE_KINDS_KEPT) delete alike[Object.keys(alike)[0]!];
    alike[key] = (alike[key] ?? 0) + 1;
    if (alike[key] < limit) return;
    this.stop({
      kind: FailureType.repeatedFailure,
      message: `${limit} items failed the same way (${error.kind}: ${error.message})`,
      fix: 'fix what the message says, then run the job again (retries.stop_after_failures: 0 runs every item whatever fails)',
      exitCode: 1,
    });
  }

  /** Starts no more items; the items in flight finish (drainWindow). */
  private stop(cause: JobStopCause): void {
    this.carry.stoppedBy = cause;
    this.carry.fatal = cause.message;
  }

  /**
   * Starts one item's RenderWorkflow. Its id is the same in every run of the job, so the item's
   * workflow from an earlier run may still hold it (freeHeldId), and may even have reported to this
   * run before the item came up: that outcome is the item's, and starting it again would pay for a
   * second render.
   */
  private async startRender(item: PageItem): Promise<void> {
    const childId = renderWorkflowId(this.self, item.key);
    const reportedHere = this.early.get(childId);
    if (reportedHere && hasPatch(HELD_ITEM_ID)) {
      this.early.delete(childId);
      this.settle(childId, reportedHere);
      return;
    }
    let start = await this.startItemWorkflow(item, childId);
    // Workflows from before the patch replay as they ran: waiting for the holder's report.
    if (start === 'held' && hasPatch(HELD_ITEM_ID)) {
      if (!(await this.freeHeldId(item, childId))) return;
      start = await this.startItemWorkflow(item, childId);
      if (start === 'held') this.settle(childId, startFailed(item, 'its id was taken again by another workflow'));
    }
    if (start !== 'started') return;
    const earlyOutcome = this.early.get(childId);
    if (earlyOutcome) {
      this.early.delete(childId);
      this.settle(childId, earlyOutcome);
    }
  }

  /** 'held': a workflow runs under the item's id already. A start that fails otherwise ends the item. */
  private async startItemWorkflow(item: PageItem, childId: string): Promise<'started' | 'held' | 'failed'> {
    try {
      await startChild(RenderWorkflow, {
        workflowId: childId,
        args: [
          { jobWorkflowId: this.self, item, settings: this.settings, medianRenderMs: median(this.carry.renderSamples[item.request.model]) },
        ],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
      return 'started';
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return 'held';
      this.settle(childId, startFailed(item, `could not start the item's workflow: ${(error as Error).message}`));
      return 'failed';
    }
  }

  /**
   * The item's id is held by the item's workflow from an earlier run of the job, which reports to
   * the job's workflow id. Not reported yet: its report will come to this run, which waits for it
   * (false). Reported to this run meanwhile: the item is settled (false). Otherwise its work is over:
   * its report went to an earlier run (its manifest row was written first, and this run's plan read
   * that row and still chose the item: --retry-failed, a deleted video), or it ended without one.
   * The activity then has its id free, and the item starts afresh, as if that workflow had closed
   * in time (true).
   */
  private async freeHeldId(item: PageItem, childId: string): Promise<boolean> {
    let held: ItemWorkflowState;
    try {
      held = await bookkeeping.itemWorkflowState({ workflowId: childId, jobWorkflowId: this.self, signalName: itemDoneSignal.name });
    } catch (error) {
      // Left waiting, the job could wait for ever: end the item, saying why.
      const reason = ((error instanceof ActivityFailure ? error.cause : error) as Error | undefined)?.message ?? String(error);
      const message = `the item's workflow from an earlier run holds its id, and what became of it could not be learned: ${reason}`;
      if (this.carry.inFlight[childId]) this.settle(childId, startFailed(item, message));
      return false;
    }
    // Signals are handled before an activity's result, so a report that came here is counted by now.
    if (held.state === 'running' || !this.carry.inFlight[childId]) return false;
    log.info("starting an item again after its earlier run's workflow", {
      event: LogEvent.itemRestarted,
      jobId: this.self,
      key: item.key,
      model: item.request.model,
      workflowId: childId,
      ...held,
    });
    return true;
  }

  /** Stop early: cancel in-flight children; they record `canceled` and report back. */
  private async cancelInFlight(): Promise<void> {
    for (const id of Object.keys(this.carry.inFlight)) {
      if (this.canceledInFlight.has(id)) continue;
      this.canceledInFlight.add(id);
      await getExternalWorkflowHandle(id)
        .cancel()
        .catch(() => undefined);
    }
  }
}

/**
 * What an ended item spent against the budget: what its row records (billed or estimated); from a
 * workflow that records none, its reservation when it may have created (an unknown create is spent).
 */
function spentBy(outcome: ItemOutcome, reservedUsd: number | undefined): number {
  // A rewrite paid for counts whatever became of the create, also when a job-wide cause then left the
  // item not started (its Messages call was answered and billed; docs/costs.md).
  const rewrite = outcome.rewriteCostUsd ?? 0;
  if (outcome.costUsd !== undefined) return itemChargeUsd({ createUsd: outcome.costUsd, rewriteUsd: rewrite })!;
  if (outcome.notStarted || outcome.createsMaybeSent === 0) return rewrite;
  return reservedUsd ?? 0;
}

/** `$49.80`. */
function usd(amount: number): string {
  return `$${amount.toFixed(2)}`;
}

/** The outcome of an item whose workflow could not be started. */
function startFailed(item: PageItem, message: string): ItemOutcome {
  const { key, index } = item;
  return { key, index, model: item.request.model, state: 'failed', error: { kind: FailureType.startFailed, message } };
}

/** A failure message with its numbers and ids left out, so that the same refusal of two items reads the same. */
function normalizedMessage(message: string): string {
  return message
    .toLowerCase()
    .replace(/[0-9a-f]{8,}|[0-9a-z_-]*\d[0-9a-z_-]*/g, '#')
    .replace(/\s+/g, ' ')
    .slice(0, ALIKE_MESSAGE_CHARS);
}

/** What the progress query answers before the plan is read: the job, no counts yet. */
function preparingProgress(): JobProgress {
  const startedAt = workflowInfo().startTime.getTime();
  return {
    job: workflowInfo().workflowId.replace(/^reelflow-/, ''),
    state: 'preparing',
    total: 0,
    started: 0,
    runs: 1,
    startedAt,
    counts: { ...emptyCounts(), in_flight: 0, pending: 0 },
    inFlight: [],
    recentFailures: [],
  };
}

function median(values: number[] | undefined): number | undefined {
  if (!values || values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
