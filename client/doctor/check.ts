// One line of `reelflow doctor`: what was checked, how it went, and what to do about it.

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** Which exit status a failed check implies (docs/commands.md, "Exit codes"): 2 input or key, 3 infrastructure. */
export type FailureClass = 'usage' | 'infrastructure';

export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  /** Only for `fail`; defaults to infrastructure. */
  failure?: FailureClass;
}

/**
 * Every probe of the doctor is bounded by this. A freshly started LiteLLM answered its first
 * requests in over 5 s on a busy 2-core machine (then 3.7 s, then 50 ms): a 5 s bound told its
 * user an address that works was unreachable.
 */
export const PROBE_TIMEOUT_MS = 10_000;

export const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail });
export const warn = (name: string, detail: string): Check => ({ name, status: 'warn', detail });
export const fail = (name: string, detail: string, failure: FailureClass = 'infrastructure'): Check => ({
  name,
  status: 'fail',
  detail,
  failure,
});

/** 0 when nothing failed; 2 when the job file or the key is the problem (fix that first); else 3. */
export function exitStatusOf(checks: readonly Check[]): 0 | 2 | 3 {
  const failed = checks.filter((c) => c.status === 'fail');
  if (failed.length === 0) return 0;
  return failed.some((c) => c.failure === 'usage') ? 2 : 3;
}

/** Rejects with "no answer within N s" when `work` takes longer than `ms`; a late failure of `work` is ignored. */
export async function withTimeout<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => undefined);
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
