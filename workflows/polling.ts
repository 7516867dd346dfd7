// The wait before the next status check: a pure function, so it is unit-tested and replays
// identically. Aim (docs/protocol.md §7): about three checks for a render of typical length, with
// completion noticed within a few percent of the render time.

export interface ProgressSample {
  /** Time since the task was created, ms. */
  elapsedMs: number;
  /** Progress reported then, 0..100. */
  progress: number;
}

export interface PollingInput {
  initialMs: number;
  maxMs: number;
  /** Status checks made so far for this task. */
  checks: number;
  /** Time since the task was created, ms. */
  elapsedMs: number;
  /** Progress the gateway last reported, 0..100. */
  progress?: number;
  /** The earliest check that reported progress above zero, if any (for the rate). */
  firstProgress?: ProgressSample;
  /** Server hint (openai-poll-after-ms, Retry-After), ms: honoured up to maxMs. */
  serverHintMs?: number;
  /** Median render time of this model in this job, ms. */
  medianRenderMs?: number;
  /**
   * How long the last reported progress has stood unchanged, ms: from the check that first saw it
   * to this one (0 when it just changed, absent when not tracked). A gateway that refreshes a task
   * from its upstream only now and then (new-api: every 15 s) repeats its last reading.
   */
  unchangedForMs?: number;
}

/** Never poll faster than this: the real gateway refreshes status every ~15 s anyway. */
const FLOOR_MS = 250;
/** After an unchanged reading, wait this many times as long as it has stood unchanged. */
const UNCHANGED_FACTOR = 2;
/** ...but at most this share of the time since creation (the bound on how late the end is noticed). */
const STALE_SHARE = 0.5;

/**
 * Time until the render ends, from the rate between two progress samples. Gateways report 0 %
 * while a task waits in their queue, so one sample (progress / elapsed) would overestimate the
 * total by the queue time; the rate between two samples does not depend on when rendering began.
 */
function remainingFromRate(first: ProgressSample, elapsedMs: number, progress: number): number | undefined {
  const gained = progress - first.progress;
  const took = elapsedMs - first.elapsedMs;
  if (gained <= 0 || took <= 0) return undefined;
  return ((100 - progress) * took) / gained;
}

export function nextPollDelay(input: PollingInput): number {
  const { initialMs, maxMs, checks, elapsedMs, progress, firstProgress, serverHintMs, medianRenderMs } = input;
  // Leave a small margin past the expected end so the check lands just after completion.
  const slack = Math.max(FLOOR_MS, elapsedMs * 0.03);
  const reported = progress !== undefined && progress > 0 && progress < 100;
  const rateRemaining = reported && firstProgress ? remainingFromRate(firstProgress, elapsedMs, progress) : undefined;
  let delay: number;
  if (rateRemaining !== undefined) {
    delay = rateRemaining + slack;
  } else if (reported) {
    // One sample: the second one gives the rate. Progress is reported in whole percent, so a
    // short baseline makes the rate wrong by a point or two and the predicted end early (one more
    // check); waiting as long again as the render has run (at most 3 x initial) halves that error.
    // The single-sample estimate (an upper bound, queue time included) still caps the wait.
    const upperBound = elapsedMs / (progress / 100) - elapsedMs;
    delay = Math.min(upperBound + slack, Math.max(FLOOR_MS, Math.min(initialMs * 3, elapsedMs)));
  } else if (progress === undefined && medianRenderMs !== undefined && medianRenderMs > elapsedMs) {
    // A gateway that reports no progress: this model's renders in this job usually end around the
    // median. (One that reports 0 % is queueing: its progress, once it moves, is the better guide.)
    delay = checks === 0 ? Math.min(initialMs, medianRenderMs) : medianRenderMs - elapsedMs + slack;
  } else if (checks === 0) {
    delay = initialMs;
  } else {
    // Nothing to extrapolate from: back off geometrically from the initial delay. A gateway that
    // reports no progress at all gets checks within ~10 % of elapsed time, so a long render is
    // still noticed within 10 % of its length. One that reports 0 % is queueing: the render has
    // not begun, the first progress it reports will be extrapolated, so the back-off grows fast
    // (next check at up to 2.5 x the elapsed time) and spends few checks on the queue.
    delay =
      progress === undefined
        ? Math.min(initialMs * Math.pow(1.6, checks), Math.max(initialMs, elapsedMs * 0.1))
        : Math.min(initialMs * Math.pow(2.5, checks), Math.max(initialMs, elapsedMs * 1.5));
  }
  // A reading that stood unchanged for a while will stand about as long again: the gateway refreshes
  // no faster than that. Wait that long (so each stale check doubles the staleness seen), never less
  // than the initial delay, and never more than half the time the render has run: a reading
  // that never moves (a gateway that reports a fixed percentage until the end) says nothing about
  // the end, and doubling without that bound noticed a 5 s render after 17 s.
  const unchangedForMs = input.unchangedForMs ?? 0;
  if (unchangedForMs > 0) {
    const stale = Math.max(initialMs, Math.min(UNCHANGED_FACTOR * unchangedForMs, STALE_SHARE * elapsedMs));
    // A percentage with no rate behind it was extrapolated from the stale sample itself: drop it.
    // A measured rate, or the back-off of a queue at 0 %, may still wait longer.
    delay = reported && rateRemaining === undefined ? stale : Math.max(delay, stale);
  }
  delay = Math.min(Math.max(delay, Math.min(FLOOR_MS, initialMs)), maxMs);
  // A server may ask for more time between checks, but only up to polling.max: the hint is an
  // untrusted header, and one `openai-poll-after-ms: 999999999999` once held the only check of a
  // finished render back until the item's deadline (docs/limits.md).
  if (serverHintMs !== undefined && serverHintMs > delay) delay = Math.min(serverHintMs, maxMs);
  return Math.round(delay);
}
