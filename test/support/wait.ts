// Waiting in tests for something a real process does: polls `check` every 100 ms and fails naming
// `what` once `timeoutMs` has passed (a bounded wait, never an open-ended one).
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * `promise`'s value, or `fallback` once `ms` have passed. The timer is cleared either way: a race's
 * timeout left pending keeps the test file's process (and the suite) waiting until it fires.
 */
export async function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<F>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
