// The deadline of one exchange, gone with it. AbortSignal.timeout's timer cannot be cleared: it
// outlives the exchange by its whole span and holds the async context it was made in, which in a
// worker is the activity's (its input, logger and metrics). At 45 calls a second and a 120 s span
// that kept ~3,000 finished activities alive (docs/worker-memory.md, "Finished calls").

export interface Deadline {
  readonly signal: AbortSignal;
  /** The deadline passed (the signal aborted for it, not for a caller's cancel). */
  readonly expired: boolean;
  /** Ends the timer: call it when the exchange is over, whatever its outcome. */
  clear(): void;
}

export function deadline(ms: number): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')), ms);
  // Like AbortSignal.timeout's: a pending deadline alone does not keep the process running.
  timer.unref();
  return {
    signal: controller.signal,
    get expired() {
      return controller.signal.aborted;
    },
    clear: () => clearTimeout(timer),
  };
}
