// Gateway and storage errors become Temporal failures whose type is the error's kind, so workflows
// branch on types and the manifest gets a stable `error.kind`. Messages are redacted once more.
import { ApplicationFailure } from '@temporalio/activity';
import { isGatewayError, redact } from '../gateway';
import { TooLargeError } from '../storage/objects/errors';
import { StorageError } from '../storage/objects/errors';
import { FailureType, type FailureKind } from '../domain/failures';

/**
 * The one way an activity fails with a kind of its own: a failure no retry mends (`nonRetryable`),
 * its message redacted, with `details` the workflow reads (preflight's "nothing was sent").
 */
export function finalFailure(kind: FailureKind, message: string, details?: unknown[]): ApplicationFailure {
  return ApplicationFailure.create({ type: kind, message: redact(message), nonRetryable: true, ...(details ? { details } : {}) });
}

/** A failure of a kind of its own that another attempt may mend (Temporal retries it), its message redacted. */
export function passingFailure(kind: FailureKind, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: kind, message: redact(message), nonRetryable: false });
}

/** The same failure made retryable, with a note why (a stopping worker's cut: worker/drain.ts). */
export function retryableAgain(failure: ApplicationFailure, note: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: failure.type ?? undefined,
    message: `${failure.message} (${note})`,
    details: failure.details ? [...failure.details] : undefined,
    nonRetryable: false,
  });
}

export function asActivityFailure(error: unknown): unknown {
  if (error instanceof ApplicationFailure) return error;
  if (isGatewayError(error)) {
    return ApplicationFailure.create({ type: error.kind, message: redact(error.message), nonRetryable: !error.retryable });
  }
  if (error instanceof TooLargeError) {
    // Another attempt would download the same too-large body again.
    return ApplicationFailure.create({ type: FailureType.videoTooLarge, message: redact(error.message), nonRetryable: true });
  }
  if (error instanceof StorageError) {
    // A final one (a planted link, a file reelflow must not replace) meets the same cause again.
    return ApplicationFailure.create({ type: FailureType.storage, message: redact(error.message), nonRetryable: error.final });
  }
  const message = error instanceof Error ? error.message : String(error);
  return ApplicationFailure.create({ type: FailureType.error, message: redact(message), nonRetryable: false });
}

/** Runs an activity body, translating whatever it throws. */
export async function translated<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw asActivityFailure(error);
  }
}
