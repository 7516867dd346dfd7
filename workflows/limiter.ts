// LimiterWorkflow: the shared limits of one gateway key (or key and model), docs/limits.md. One
// long-lived workflow per limit, so every job and every worker of the fleet asks the same one:
// a render asks for a permit by signal (activities/limiter.ts askForPermit, a signalWithStart),
// waits for the grant by signal, and gives the permit back by signal when its render ends. A holder
// that can no longer give it back (its workflow terminated or timed out) holds it only until its
// lease ends: the limiter then asks Temporal whether the holder's run still runs, and frees the
// permit of one that does not. The limiter continues as new before its history grows large, and
// ends after a while with nobody holding or asking (the next ask starts it again).
import {
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineSignal,
  getExternalWorkflowHandle,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { PermitHolderRef, PermitRequest } from '../activities/limiter';
import type { JobSettings } from '../jobfile/plan';
import { permits } from './activities';

/** A render asks (activities/limiter.ts sends it by this name). */
export const askPermitSignal = defineSignal<[PermitRequest]>('askPermit');
/** A render gives its permit back, or withdraws its ask (canceled while waiting). */
export const releasePermitSignal = defineSignal<[PermitHolderRef]>('releasePermit');
/** The limiter grants the render's run its permit. */
export const permitGrantedSignal = defineSignal('permitGranted');

/** How long a permit is held before the limiter checks that its holder still runs. */
const LEASE_MS = 60_000;
/** With nobody holding or asking this long, the limiter ends. */
const IDLE_MS = 10 * 60_000;
/** Events per run before continuing as new: each permit costs about a dozen. */
const HISTORY_BUDGET = 2_000;
/**
 * How long a grant counts against creates_per_minute: a minute, and the time a granted create may
 * take to reach the gateway (its activity is scheduled, picked up, its body sent), so the gateway,
 * which counts a minute from each create's arrival, never sees one more (docs/limits.md).
 */
const RATE_WINDOW_MS = 65_000;

export interface PermitHolder extends PermitRequest {
  grantedAt: number;
  /** When the limiter next checks that the holder still runs. */
  leaseUntil: number;
}

export interface LimiterCarry {
  holders: PermitHolder[];
  /** Asks not granted yet, oldest first. */
  waiting: PermitRequest[];
  /** When each permit of the last minute was granted (creates_per_minute). */
  grantedAt: number[];
  runs: number;
}

export interface LimiterInput {
  /** Tests shorten these; absent: the defaults above. */
  leaseMs?: number;
  idleMs?: number;
  historyBudget?: number;
  carry?: LimiterCarry;
}

export async function LimiterWorkflow(input: LimiterInput = {}): Promise<void> {
  const limiter = new Limiter(input);
  setHandler(askPermitSignal, (request) => limiter.asked(request));
  setHandler(releasePermitSignal, (holder) => limiter.released(holder));
  const historyBudget = input.historyBudget ?? HISTORY_BUDGET;
  for (;;) {
    // Before granting: an ask or release that comes while the grants are sent wakes the wait below.
    limiter.changed = false;
    await limiter.grantWhatFits();
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > historyBudget) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof LimiterWorkflow>({ ...input, carry: { ...limiter.carry, runs: limiter.carry.runs + 1 } });
    }
    if (limiter.idle()) {
      // An ask that comes as this run ends fails its completion, and the run goes on with it.
      if (!(await condition(() => !limiter.idle(), input.idleMs ?? IDLE_MS))) return;
      continue;
    }
    await condition(() => limiter.changed, Math.max(1, limiter.nextWakeAt() - Date.now()));
    await limiter.checkLeases();
  }
}

class Limiter {
  readonly carry: LimiterCarry;
  /** Set by each signal: the main loop looks at its state again. */
  changed = false;
  /** Holders that asked again: their grant is sent again. */
  private readonly retell = new Set<PermitHolder>();
  private readonly leaseMs: number;

  constructor(input: LimiterInput) {
    this.carry = input.carry ?? { holders: [], waiting: [], grantedAt: [], runs: 1 };
    this.leaseMs = input.leaseMs ?? LEASE_MS;
  }

  idle(): boolean {
    return this.carry.holders.length === 0 && this.carry.waiting.length === 0;
  }

  asked(request: PermitRequest): void {
    const { holders, waiting } = this.carry;
    // One request per run: an ask repeated (a retried activity, a render asking again) is the same ask.
    const same = (r: PermitRequest) => r.runId === request.runId;
    const holder = holders.find(same);
    // Granted before, and the render asks again: it is told again (grantWhatFits), not counted twice.
    if (holder) this.retell.add(holder);
    else if (!waiting.some(same)) waiting.push(request);
    this.changed = true;
  }

  released(holder: PermitHolderRef): void {
    this.carry.holders = this.carry.holders.filter((h) => h.runId !== holder.runId);
    this.carry.waiting = this.carry.waiting.filter((r) => r.runId !== holder.runId);
    this.changed = true;
  }

  /**
   * The limits in force: the strictest of every job holding or asking, so that no job's shared
   * limit is exceeded when jobs on one key say different numbers.
   */
  private limits(): { maxInFlight: number; createsPerMinute: number } {
    const all = [...this.carry.holders, ...this.carry.waiting].map((r) => r.limits);
    return {
      maxInFlight: Math.min(...all.map((l) => l.maxInFlight ?? Infinity)),
      createsPerMinute: Math.min(...all.map((l) => l.createsPerMinute ?? Infinity)),
    };
  }

  private forgetOldGrants(now: number): void {
    this.carry.grantedAt = this.carry.grantedAt.filter((at) => at > now - RATE_WINDOW_MS);
  }

  /** Grants the oldest asks while both limits allow, and tells their renders. */
  async grantWhatFits(): Promise<void> {
    const now = Date.now();
    this.forgetOldGrants(now);
    const granted: PermitHolder[] = [];
    for (;;) {
      const { maxInFlight, createsPerMinute } = this.limits();
      const next = this.carry.waiting[0];
      if (!next || this.carry.holders.length >= maxInFlight || this.carry.grantedAt.length >= createsPerMinute) break;
      this.carry.waiting.shift();
      const holder: PermitHolder = { ...next, grantedAt: now, leaseUntil: now + this.leaseMs };
      this.carry.holders.push(holder);
      this.carry.grantedAt.push(now);
      granted.push(holder);
    }
    granted.push(...[...this.retell].filter((h) => this.carry.holders.includes(h)));
    this.retell.clear();
    // Sent together: one workflow task for a batch of grants.
    await Promise.all(granted.map((holder) => this.tell(holder)));
  }

  /** A render that is gone cannot be told: its permit is free again (its create never happened). */
  private async tell(holder: PermitHolder): Promise<void> {
    try {
      await CancellationScope.nonCancellable(() => getExternalWorkflowHandle(holder.workflowId, holder.runId).signal(permitGrantedSignal));
    } catch (error) {
      log.info('a permit was granted to a render that is gone: freed', { workflowId: holder.workflowId, reason: String(error) });
      this.carry.holders = this.carry.holders.filter((h) => h.runId !== holder.runId);
      const at = this.carry.grantedAt.indexOf(holder.grantedAt);
      if (at >= 0) this.carry.grantedAt.splice(at, 1);
    }
  }

  /** The next time something frees itself: a lease ends, or a grant leaves the last minute while someone waits. */
  nextWakeAt(): number {
    const times = this.carry.holders.map((h) => h.leaseUntil);
    if (this.carry.waiting.length > 0 && this.carry.grantedAt.length > 0) times.push(Math.min(...this.carry.grantedAt) + RATE_WINDOW_MS);
    return Math.min(...times, Date.now() + this.leaseMs);
  }

  /** Holders whose lease ended: those whose run still runs keep their permit for another lease; the others lose it. */
  async checkLeases(): Promise<void> {
    const now = Date.now();
    const due = this.carry.holders.filter((h) => h.leaseUntil <= now);
    if (due.length === 0) return;
    let running: string[];
    try {
      running = await permits.permitHoldersRunning({ holders: due.map(({ workflowId, runId }) => ({ workflowId, runId })) });
    } catch (error) {
      log.warn('could not check the permit holders; checking again after another lease', { reason: String(error) });
      running = due.map((h) => h.runId);
    }
    const later = Date.now() + this.leaseMs;
    for (const holder of due) {
      if (running.includes(holder.runId)) holder.leaseUntil = later;
      else {
        log.info('a permit holder ended without giving its permit back: freed', { workflowId: holder.workflowId });
        this.released(holder);
      }
    }
  }
}

/** A render asks again this often while it waits: it starts a limiter that was gone, and has this worker poll the limiters. */
const ASK_AGAIN_MS = 2 * 60_000;

/**
 * A render's side of the shared limits: asks, waits for the grant, gives the permit back. Made
 * before the render's first gateway call; its handler is set at once, as the grant may come before
 * the ask's activity has returned.
 */
export class SharedPermit {
  private granted = false;
  private limiterId: string | undefined;

  constructor(
    private readonly settings: JobSettings & { keyFingerprint?: string },
    private readonly model: string,
  ) {
    setHandler(permitGrantedSignal, () => {
      this.granted = true;
    });
  }

  /** Returns once the limiter granted this run a permit; canceled with the render. */
  async acquire(): Promise<void> {
    const { workflowId, runId } = workflowInfo();
    const { maxInFlight, createsPerMinute } = this.settings.concurrency.shared ?? {};
    const limits = { ...(maxInFlight ? { maxInFlight } : {}), ...(createsPerMinute ? { createsPerMinute } : {}) };
    for (;;) {
      ({ limiterId: this.limiterId } = await permits.askForPermit({
        settings: this.settings,
        model: this.model,
        request: { workflowId, runId, limits },
      }));
      if (await condition(() => this.granted, ASK_AGAIN_MS)) return;
      log.info('still waiting for a permit of the shared limits: asking again', { limiterId: this.limiterId });
    }
  }

  /** Gives the permit back (or withdraws the ask), also when the render was canceled. */
  async release(): Promise<void> {
    const limiterId = this.limiterId;
    if (!limiterId) return;
    const { workflowId, runId } = workflowInfo();
    await CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(limiterId).signal(releasePermitSignal, { workflowId, runId }),
    ).catch((error: unknown) => {
      // A limiter that is gone (terminated by hand) holds nothing for anyone.
      log.warn('could not give the shared permit back', { limiterId, reason: String(error) });
    });
  }
}
