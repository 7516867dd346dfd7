// The wait before the next status check: a pure function, so it is unit-tested and replays
// identically. Aim (DESIGN.md): about three checks for a render of typical length, with
// completion noticed within a few percent of the render time.

export interface PollingInput {
  initialMs: number;
  maxMs: number;
  /** Status checks made so far for this task. */
  checks: number;
  /** Time since the task was created, ms. */
  elapsedMs: number;
  /** Progress the gateway last reported, 0..100. */
  progress?: number;
  /** Server hint (openai-poll-after-ms, Retry-After), ms. */
  serverHintMs?: number;
  /** Median render time of this model in this job, ms. */
  medianRenderMs?: number;
}

/** Never poll faster than this: the real gateway refreshes status every ~15 s anyway. */
const FLOOR_MS = 250;

export function nextPollDelay(input: PollingInput): number {
  const { initialMs, maxMs, checks, elapsedMs, progress, serverHintMs, medianRenderMs } = input;
  // Leave a small margin past the expected end so the check lands just after completion.
  const slack = Math.max(FLOOR_MS, elapsedMs * 0.03);
  let delay: number;
  if (progress !== undefined && progress >= 3 && progress < 100 && elapsedMs > 0) {
    // Linear extrapolation from reported progress: the estimate tightens with every check.
    const total = elapsedMs / (progress / 100);
    delay = total - elapsedMs + slack;
  } else if (medianRenderMs !== undefined && medianRenderMs > elapsedMs) {
    delay = medianRenderMs - elapsedMs + slack;
  } else if (checks === 0) {
    delay = initialMs;
  } else {
    // No signal at all: back off geometrically from the initial delay.
    delay = initialMs * Math.pow(1.6, checks);
  }
  // Late in an over-long render, keep checks frequent enough to stay within ~10 % of elapsed time.
  if (elapsedMs > 0 && progress === undefined) delay = Math.min(delay, Math.max(initialMs, elapsedMs * 0.1));
  delay = Math.min(Math.max(delay, Math.min(FLOOR_MS, initialMs)), maxMs);
  if (serverHintMs !== undefined && serverHintMs > delay) delay = serverHintMs;
  return Math.round(delay);
}
