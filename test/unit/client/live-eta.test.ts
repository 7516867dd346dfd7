// The ETA shown while a job runs counts down between item ends (the workflow's own clock stands still).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { liveEta } from '../../../client/control';
import type { JobProgress } from '../../../workflows/types';

const progress = (over: Partial<JobProgress> = {}): JobProgress => ({
  job: 'j',
  state: 'running',
  total: 10,
  started: 6,
  counts: { succeeded: 4, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0, pending: 4, in_flight: 2 },
  inFlight: [],
  recentFailures: [],
  startedAt: 1_000_000,
  runs: 1,
  ...over,
});

describe('liveEta', () => {
  // 4 of 10 ended 40 s after the start: the workflow said 60 s more, a finish at start + 100 s.
  const answered = progress({ etaMs: 60_000 });
  it("counts the workflow's estimate down to now", () => {
    assert.equal(liveEta(answered, 1_000_000 + 40_000).etaMs, 60_000);
    assert.equal(liveEta(answered, 1_000_000 + 55_000).etaMs, 45_000);
    assert.equal(liveEta(answered, 1_000_000 + 99_000).etaMs, 1_000);
  });
  it('past the estimated finish, shows none rather than a wrong one', () => {
    assert.equal(liveEta(answered, 1_000_000 + 100_001).etaMs, undefined);
  });
  it('leaves a progress without an ETA as it is', () => {
    assert.equal(liveEta(progress(), 2_000_000).etaMs, undefined);
  });
});
