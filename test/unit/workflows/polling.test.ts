import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextPollDelay, type PollingInput } from '../../../workflows/polling';

const base: PollingInput = { initialMs: 10_000, maxMs: 60_000, checks: 0, elapsedMs: 0 };

/** Plays a render of `renderMs` whose progress grows linearly; returns checks made and detection lag. */
function simulate(renderMs: number, options: Partial<PollingInput> = {}, reportProgress = true) {
  let elapsed = 0;
  let checks = 0;
  let progress: number | undefined;
  for (;;) {
    elapsed += nextPollDelay({ ...base, ...options, checks, elapsedMs: elapsed, progress });
    checks++;
    if (elapsed >= renderMs) return { checks, lagMs: elapsed - renderMs };
    progress = reportProgress ? Math.floor((elapsed / renderMs) * 100) : undefined;
    assert.ok(checks < 100, 'polling must converge');
  }
}

describe('nextPollDelay', () => {
  it('waits the configured initial delay before the first check when nothing is known', () => {
    assert.equal(nextPollDelay(base), 10_000);
  });

  it('waits for the model median before the first check when the job has one', () => {
    const delay = nextPollDelay({ ...base, medianRenderMs: 45_000 });
    assert.ok(delay >= 45_000 && delay <= 47_000, `got ${delay}`);
  });

  it('extrapolates from reported progress', () => {
    // 25 % after 20 s: about 60 s remain.
    const delay = nextPollDelay({ ...base, checks: 1, elapsedMs: 20_000, progress: 25 });
    assert.ok(delay > 55_000 && delay <= 60_000, `got ${delay}`);
  });

  it('never exceeds max, except to honour a longer server hint', () => {
    assert.equal(nextPollDelay({ ...base, checks: 1, elapsedMs: 10_000, progress: 5 }), 60_000);
    assert.equal(nextPollDelay({ ...base, checks: 1, elapsedMs: 10_000, progress: 5, serverHintMs: 90_000 }), 90_000);
  });

  it('honours a server hint longer than its own estimate', () => {
    assert.equal(nextPollDelay({ ...base, checks: 1, elapsedMs: 10_000, serverHintMs: 25_000 }), 25_000);
  });

  it('backs off without progress but stays within 10 % of elapsed time late in a long render', () => {
    const delay = nextPollDelay({ ...base, checks: 8, elapsedMs: 300_000 });
    assert.ok(delay <= 30_000, `got ${delay}`);
    assert.ok(delay >= 10_000, `got ${delay}`);
  });

  it('meets the design aim for 30-120 s renders with progress: few checks, completion noticed within 10 %', () => {
    let totalChecks = 0;
    const renders = [30_000, 45_000, 60_000, 75_000, 90_000, 105_000, 120_000];
    for (const renderMs of renders) {
      const { checks, lagMs } = simulate(renderMs);
      totalChecks += checks;
      assert.ok(lagMs <= renderMs * 0.1, `render ${renderMs} ms noticed ${lagMs} ms late`);
    }
    assert.ok(totalChecks / renders.length <= 4, `average ${totalChecks / renders.length} checks`);
  });

  it('with a median hint, a typical render needs about one or two checks', () => {
    const { checks, lagMs } = simulate(60_000, { medianRenderMs: 60_000 });
    assert.ok(checks <= 2, `checks ${checks}`);
    assert.ok(lagMs <= 6_000, `lag ${lagMs}`);
  });

  it('without any progress still notices completion within 10 % of a long render', () => {
    const { lagMs } = simulate(120_000, {}, false);
    assert.ok(lagMs <= 12_000, `lag ${lagMs}`);
  });

  it('never polls faster than the floor', () => {
    assert.ok(nextPollDelay({ ...base, initialMs: 100, checks: 3, elapsedMs: 1_000, progress: 99 }) >= 100);
  });
});
