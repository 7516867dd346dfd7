// Every failure type name that crosses the activity/workflow boundary, in one place and one style
// (snake_case, as users read them in the manifest's `error.kind`). Activities throw
// ApplicationFailures of these types; workflows branch on them. This module imports no values, so
// workflows may import it (it is safe inside the deterministic bundle).
import type { GatewayErrorKind } from '../gateway/errors';

export const FailureType = {
  // From the gateway client, one per gateway error class (gateway/errors.ts has the full set); the
  // ones workflows branch on are checked against the gateway's own spelling.
  auth: 'auth' satisfies GatewayErrorKind,
  ambiguousCreate: 'ambiguous_create' satisfies GatewayErrorKind,
  // From the activities themselves.
  missingKey: 'missing_key',
  createNotSent: 'create_not_sent',
  jobFileInvalid: 'job_file_invalid',
  jobFileChanged: 'job_file_changed',
  storage: 'storage',
  videoTooLarge: 'video_too_large',
  error: 'error',
  // Decided by the workflows.
  renderFailed: 'render_failed',
  timedOut: 'timed_out',
  activityTimeout: 'activity_timeout',
  canceled: 'canceled',
  startFailed: 'start_failed',
} as const;

/** Failures that no other item can avoid (a refused key, no key at all): they stop the whole job. */
export const JOB_FATAL_FAILURES: ReadonlySet<string> = new Set([FailureType.auth, FailureType.missingKey]);
