// The end of a run with blocked shots (docs/chains.md): how many, and each with the shot it waited on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeBlocked } from '../../../client/summary';

const counts = { succeeded: 2, failed: 1, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 };

describe('describeBlocked', () => {
  it('says how many were blocked and why each', () => {
    process.env.NO_COLOR = '1';
    const lines = describeBlocked({
      counts: { ...counts, blocked: 2 },
      blocked: [
        { key: 'shot-4', blockedBy: 'shot-3', why: 'shot-3 ended failed' },
        { key: 'shot-5', blockedBy: 'shot-3', why: 'shot-4 was blocked by shot-3' },
      ],
    });
    assert.match(lines[0]!, /^2 blocked: a shot they need did not succeed/);
    assert.deepEqual(lines.slice(1), ['  blocked shot-4: shot-3 ended failed', '  blocked shot-5: shot-4 was blocked by shot-3']);
  });

  it('says nothing for a job without blocked items, or one from before the state', () => {
    assert.deepEqual(describeBlocked({ counts }), []);
    assert.deepEqual(describeBlocked({ counts: { ...counts, blocked: 0 } }), []);
  });
});
