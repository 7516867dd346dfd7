// Every failure type name that crosses the activity/workflow boundary, in one place and one style
// (snake_case, as users read them in the manifest's `error.kind`). Activities throw
// ApplicationFailures of these types; workflows branch on them. This module imports no values, so
// workflows may import it (it is safe inside the deterministic bundle).
import type { GatewayErrorKind } from '../gateway/errors';

export const FailureType = {
  // From the gateway client, one per gateway error class (gateway/errors.ts), in its own spelling;
  // GatewayKindsCovered below fails the type check when the gateway gains a kind this table lacks.
  auth: 'auth' satisfies GatewayErrorKind,
  ambiguousCreate: 'ambiguous_create' satisfies GatewayErrorKind,
  modelUnavailable: 'model_unavailable' satisfies GatewayErrorKind,
  routeNotFound: 'route_not_found' satisfies GatewayErrorKind,
  quotaExhausted: 'quota_exhausted' satisfies GatewayErrorKind,
  gatewayUnavailable: 'gateway_unavailable' satisfies GatewayErrorKind,
  taskNotFound: 'task_not_found' satisfies GatewayErrorKind,
  rateLimited: 'rate_limited' satisfies GatewayErrorKind,
  invalidRequest: 'invalid_request' satisfies GatewayErrorKind,
  referenceChanged: 'reference_changed' satisfies GatewayErrorKind,
  quotaOrPermission: 'quota_or_permission' satisfies GatewayErrorKind,
  download: 'download' satisfies GatewayErrorKind,
  aborted: 'aborted' satisfies GatewayErrorKind,
  /** The key is not set, or the key rule refuses where the job would send it (also from activities). */
  missingKey: 'missing_key' satisfies GatewayErrorKind,
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

/** Fails to compile while a gateway error kind is missing from FailureType. */
type GatewayKindsCovered = [Exclude<GatewayErrorKind, FailureKind>] extends [never] ? true : never;
export const gatewayKindsCovered: GatewayKindsCovered = true;

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
 * item fails alone, `call_unanswered`.
 */
export const JOB_WIDE_CAUSES: Readonly<Partial<Record<FailureKind, JobWideCause>>> = {
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
};

/** The cause for a failure kind when it is job-wide; undefined for an item's own failure. */
export function jobWideCause(kind: string | undefined): JobWideCause | undefined {
  const known = asFailureKind(kind);
  return known !== undefined && Object.prototype.hasOwnProperty.call(JOB_WIDE_CAUSES, known) ? JOB_WIDE_CAUSES[known] : undefined;
}
