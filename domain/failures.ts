// Every failure kind reelflow names, in one table and one style (snake_case, as users read them in
// the manifest's `error.kind`), with the unions derived from it, as Temporal's SDK derives its
// enum types from one table. The gateway client raises the first group (gateway/errors.ts: one
// class each), activities throw ApplicationFailures of these types, workflows branch on them.
// domain/ imports nothing, so every layer may import it, the deterministic workflow bundle included.

/** The kinds the gateway client raises: one GatewayError class each (gateway/errors.ts). */
export const GatewayFailure = {
  auth: 'auth',
  ambiguousCreate: 'ambiguous_create',
  modelUnavailable: 'model_unavailable',
  routeNotFound: 'route_not_found',
  quotaExhausted: 'quota_exhausted',
  gatewayUnavailable: 'gateway_unavailable',
  taskNotFound: 'task_not_found',
  rateLimited: 'rate_limited',
  invalidRequest: 'invalid_request',
  referenceChanged: 'reference_changed',
  quotaOrPermission: 'quota_or_permission',
  download: 'download',
  aborted: 'aborted',
  /** The key is not set, or the key rule refuses where the job would send it (also from activities). */
  missingKey: 'missing_key',
} as const;

/** What a GatewayError's `kind` can be. */
export type GatewayErrorKind = (typeof GatewayFailure)[keyof typeof GatewayFailure];

export const FailureType = {
  ...GatewayFailure,
  // From the activities themselves.
  createNotSent: 'create_not_sent',
  /**
   * One item's gateway call failed on every base address for its whole retry budget, yet an address
   * answered a fresh request just after (activities/job-wide-evidence.ts): the item's failure, not
   * the job's.
   */
  callUnanswered: 'call_unanswered',
  /** A budget is set and an item's model has no price (docs/costs.md). */
  budgetUnpriced: 'budget_unpriced',
  /** The next item would cross budget.max_usd: the job starts no more (docs/costs.md). */
  budgetReached: 'budget_reached',
  jobFileInvalid: 'job_file_invalid',
  jobFileChanged: 'job_file_changed',
  storage: 'storage',
  /** The job's output location belongs to another job (storage/records/owner.ts). */
  outputOwned: 'output_owned',
  videoTooLarge: 'video_too_large',
  /** A film could not be cut from its clips (docs/chains.md, "Assembly"): ffmpeg refused them, or a clip is not its row's. */
  assemblyRefused: 'assembly_refused',
  error: 'error',
  // Decided by the workflows.
  renderFailed: 'render_failed',
  timedOut: 'timed_out',
  activityTimeout: 'activity_timeout',
  canceled: 'canceled',
  startFailed: 'start_failed',
  /** An item never started: an item it needs did not succeed (docs/chains.md). */
  blocked: 'blocked',
  /** Not an item's failure: the job stopped after `retries.stop_after_failures` identical ones. */
  repeatedFailure: 'repeated_failure',
} as const;

/**
 * Every failure kind: what a manifest row's `error.kind`, an item outcome's and a stop cause's
 * kind can be. One union, derived from the table above.
 */
export type FailureKind = (typeof FailureType)[keyof typeof FailureType];

/** A failure type as read from Temporal (ApplicationFailure.type) or a row: the kind when it is one. */
const KINDS: ReadonlySet<string> = new Set(Object.values(FailureType));
export function asFailureKind(type: string | undefined | null): FailureKind | undefined {
  return type !== undefined && type !== null && KINDS.has(type) ? (type as FailureKind) : undefined;
}

/** What a job-wide cause means for the run: its exit code (docs/commands.md: 2 model, route or key; 3 unreachable) and the fix. */
export interface JobWideCause {
  exitCode: 2 | 3;
  fix: string;
}

/**
 * Failures whose cause is the job's, not the item's: every other item would meet them too. One
 * stops the job from starting items; items in flight finish; an item whose create met it was never
 * created and stays not started (docs/reruns.md). `gateway_unavailable` reaches a workflow only
 * after the gateway client tried every base address for its whole retry budget (gateway/retry.ts)
 * and no address answered a fresh request after it (activities/job-wide-evidence.ts); otherwise the
 * item fails alone, `call_unanswered`. Every reader asks this table: the job's stop rule, a rerun's
 * choice of what is done (storage/manifest/row.ts itemIsDone), `reelflow enhance`, the exit codes.
 */
export const JOB_WIDE_CAUSES = {
  [FailureType.modelUnavailable]: {
    exitCode: 2,
    fix: "fix the model name (the gateway's catalog: reelflow doctor) or use a key of the token group that has the model",
  },
  [FailureType.auth]: { exitCode: 2, fix: 'fix or re-enable the key, then run the job again' },
  [FailureType.missingKey]: { exitCode: 2, fix: "set the key's environment variable where the workers run, then run the job again" },
  [FailureType.routeNotFound]: {
    exitCode: 2,
    fix: "point gateway.base_urls at the gateway's root, and use a protocol (models.<m>.protocol) the gateway serves",
  },
  [FailureType.quotaExhausted]: { exitCode: 2, fix: "top up the key's quota or the account's balance, then run the job again" },
  [FailureType.gatewayUnavailable]: {
    exitCode: 3,
    fix: 'bring a gateway base address back (reelflow doctor names each and why), then run the job again',
  },
} as const satisfies Partial<Record<FailureKind, JobWideCause>>;

/** The kinds that are job-wide causes. */
export type JobWideKind = keyof typeof JOB_WIDE_CAUSES;

/** Whether a failure kind (as a row or a failure carries it) is a job-wide cause. */
export function isJobWideKind(kind: string | undefined): kind is JobWideKind {
  return kind !== undefined && Object.prototype.hasOwnProperty.call(JOB_WIDE_CAUSES, kind);
}

/** The cause for a failure kind when it is job-wide; undefined for an item's own failure. */
export function jobWideCause(kind: string | undefined): JobWideCause | undefined {
  return isJobWideKind(kind) ? JOB_WIDE_CAUSES[kind] : undefined;
}
