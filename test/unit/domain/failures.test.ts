// The one table of failure kinds and job-wide causes (domain/failures.ts): the gateway's error
// classes take their kinds from it, and an item ended by a job-wide cause is continued by a plain run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApplicationFailure } from '@temporalio/activity';
import { asFailureKind, FailureType, isJobWideKind, JOB_WIDE_CAUSES, jobWideCause } from '../../../domain/failures';
import { asActivityFailure, finalFailure } from '../../../activities/failures';
import { AuthError, DownloadError, GatewayAbortedError, QuotaOrPermissionError, RateLimitedError } from '../../../gateway';
import { itemIsDone } from '../../../storage/manifest/row';
import { manifestRow } from '../../support/storage';

describe('job-wide failure kinds', () => {
  it('exit 2 for model, route, key and quota; 3 for an unreachable gateway; none for an item failure', () => {
    const codes = Object.fromEntries(Object.entries(JOB_WIDE_CAUSES).map(([kind, cause]) => [kind, cause.exitCode]));
    assert.deepEqual(codes, {
      model_unavailable: 2,
      auth: 2,
      missing_key: 2,
      route_not_found: 2,
      quota_exhausted: 2,
      gateway_unavailable: 3,
    });
    for (const kind of ['invalid_request', 'render_failed', 'quota_or_permission', 'call_unanswered', 'toString', undefined])
      assert.equal(jobWideCause(kind), undefined);
  });

  it('a plain run continues an item a job-wide cause ended', () => {
    for (const kind of Object.keys(JOB_WIDE_CAUSES)) {
      assert.ok(isJobWideKind(kind), kind);
      const row = manifestRow(1, { state: 'failed', error: { kind, message: 'x' } });
      assert.equal(itemIsDone(row, new Set(), undefined), false, kind);
    }
    assert.equal(isJobWideKind('invalid_request'), false);
    assert.equal(
      itemIsDone(manifestRow(1, { state: 'failed', error: { kind: 'invalid_request', message: 'x' } }), new Set(), undefined),
      true,
    );
  });
});

describe('failure kinds: one table', () => {
  it('the kind of every gateway error class is in it', () => {
    const errors = [
      new AuthError('a'),
      new RateLimitedError('b'),
      new QuotaOrPermissionError('c'),
      new DownloadError('d'),
      new GatewayAbortedError('e'),
    ];
    for (const error of errors) {
      const failure = asActivityFailure(error) as ApplicationFailure;
      assert.equal(asFailureKind(failure.type), failure.type, `${error.name}: ${failure.type}`);
    }
  });

  it('asFailureKind knows the table and nothing else', () => {
    for (const kind of Object.values(FailureType)) assert.equal(asFailureKind(kind), kind);
    for (const other of ['TypeError', 'toString', '', undefined, null]) assert.equal(asFailureKind(other), undefined);
  });

  it('finalFailure: the kind as its type, not retryable, the message redacted, details kept', () => {
    const failure = finalFailure(FailureType.missingKey, 'set the key', ['proof']);
    assert.equal(failure.type, 'missing_key');
    assert.equal(failure.nonRetryable, true);
    assert.deepEqual(failure.details, ['proof']);
  });
});
