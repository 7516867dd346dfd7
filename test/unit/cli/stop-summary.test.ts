// The end of a run that stopped early (client/summary.ts): the exit code is the cause's, and the last
// lines say what stopped it, what to fix, and that a plain run continues (docs/reruns.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeStop, exitStatusFor, type JobOutcome } from '../../../client/summary';
import type { FailureKind } from '../../../activities/failure-types';

function outcome(succeeded: number, items: number): JobOutcome {
  return {
    job: 'j',
    items,
    location: '/out',
    counts: { succeeded, failed: 0, timed_out: 0, canceled: 0, unknown: 0, not_rendered: items - succeeded },
    bytes: 0,
    rows: [],
    missing: [],
    changed: [],
  };
}

describe('a stopped run: exit code and last lines', () => {
  const refused = {
    kind: 'auth' as FailureKind,
    message: 'the gateway refused the key in $GATEWAY_API_KEY (HTTP 401)',
    fix: 'fix or re-enable the key',
    exitCode: 2 as const,
  };

  it("exits with the job-wide cause's code, else 0 or 1 by the items", () => {
    assert.equal(exitStatusFor(outcome(2, 6), refused), 2);
    assert.equal(exitStatusFor(outcome(2, 6), { ...refused, kind: 'gateway_unavailable', exitCode: 3 }), 3);
    assert.equal(exitStatusFor(outcome(2, 6), { ...refused, kind: 'repeated_failure', exitCode: 1 }), 1);
    assert.equal(exitStatusFor(outcome(6, 6)), 0);
    assert.equal(exitStatusFor(outcome(5, 6)), 1);
  });

  it('names the cause, the fix and the items a plain run will render', () => {
    const lines = describeStop(refused, 'job.yaml', 4).join('\n');
    assert.match(lines, /stopped: the gateway refused the key in \$GATEWAY_API_KEY/);
    assert.match(lines, /fix: fix or re-enable the key/);
    assert.match(lines, /4 item\(s\) were not started; after the fix, `reelflow run job\.yaml` renders them/);
    assert.doesNotMatch(describeStop(refused, 'job.yaml', 0).join('\n'), /not started/);
  });
});
