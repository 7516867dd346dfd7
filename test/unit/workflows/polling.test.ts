import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextPollDelay, type PollingInput, type ProgressSample } from '../../../workflows/polling';

const base: PollingInput = { initialMs: 10_000, maxMs: 60_000, checks: 0, elapsedMs: 0 };

/**
 * Plays a render of `renderMs` that waits in the gateway's queue (0 %) for `queueShare` of its time,
 * then progresses linearly, as the real gateway reports it. Returns checks made and detection lag.
 */
function simulate(renderMs: number, options: Partial<PollingInput> = {}, { reportProgress = true, queueShare = 0.2 } = {}) {
  const queueMs = renderMs * queueShare;
  let elapsed = 0;
  let checks = 0;
  let progress: number | undefined;
  let firstProgress: ProgressSample | undefined;
  for (;;) {
    elapsed += nextPollDelay({ ...base, ...options, checks, elapsedMs: elapsed, progress, firstProgress });
    checks++;
    if (elapsed >= renderMs) return { checks, lagMs: elapsed - renderMs };
    progress = reportProgress ? Math.max(0, Math.floor(((elapsed - queueMs) / (renderMs - queueMs)) * 100)) : undefined;
    if (!firstProgress && progress !== undefined && progress > 0) firstProgress = { elapsedMs: elapsed, progress };
    assert.ok(checks < 100, 'polling must converge');
  }
}

describe('nextPollDelay', () => {
  it('waits the configured initial delay before the first check when nothing is known', () => {
    assert.equal(nextPollDelay(base), 10_000);
  });

  it('with only one progress sample, takes the second after as long again (at most 3 x initial) to learn the rate', () => {
    // 25 % after 20 s could mean 60 s to go, or much less if the task queued first.
    assert.equal(nextPollDelay({ ...base, checks: 1, elapsedMs: 20_000, progress: 25 }), 20_000);
    assert.equal(nextPollDelay({ ...base, checks: 1, elapsedMs: 50_000, progress: 25 }), 30_000);
    // ...but never past the single-sample estimate of the end (90 % after 20 s: at most 2.2 s left).
    assert.ok(nextPollDelay({ ...base, checks: 1, elapsedMs: 20_000, progress: 90 }) <= 3_000);
  });

  it('spends few checks on a queue that reports 0 %: the next check at up to 2.5 x the elapsed time', () => {
    assert.equal(nextPollDelay({ ...base, checks: 1, elapsedMs: 10_000, progress: 0 }), 15_000);
    assert.equal(nextPollDelay({ ...base, checks: 2, elapsedMs: 25_000, progress: 0 }), 37_500);
  });

  it('extrapolates from the rate between two samples, whatever the queue time was', () => {
    // 10 % at 20 s, 30 % at 30 s: 2 %/s, so 35 s to go (a single sample would say 70 s).
    const first = { elapsedMs: 20_000, progress: 10 };
    const delay = nextPollDelay({ ...base, checks: 2, elapsedMs: 30_000, progress: 30, firstProgress: first });
    assert.ok(delay >= 35_000 && delay <= 36_500, `got ${delay}`);
  });

  it('never exceeds max, not even for a longer server hint', () => {
    const first = { elapsedMs: 10_000, progress: 1 };
    assert.equal(nextPollDelay({ ...base, checks: 2, elapsedMs: 20_000, progress: 2, firstProgress: first }), 60_000);
    assert.equal(nextPollDelay({ ...base, checks: 2, elapsedMs: 20_000, progress: 2, firstProgress: first, serverHintMs: 90_000 }), 60_000);
  });

  it('bounds an absurd server hint by max (one openai-poll-after-ms: 999999999999 hid a finished render)', () => {
    const twoSeconds = { ...base, initialMs: 1_000, maxMs: 2_000 };
    assert.equal(nextPollDelay({ ...twoSeconds, checks: 1, elapsedMs: 1_000, serverHintMs: 999_999_999_999 }), 2_000);
    assert.equal(nextPollDelay({ ...twoSeconds, checks: 1, elapsedMs: 1_000, serverHintMs: 1_500 }), 1_500);
  });

  it('honours a server hint longer than its own estimate', () => {
    assert.equal(nextPollDelay({ ...base, checks: 1, elapsedMs: 10_000, serverHintMs: 25_000 }), 25_000);
  });

  it('backs off without progress but stays within 10 % of elapsed time late in a long render', () => {
    const delay = nextPollDelay({ ...base, checks: 8, elapsedMs: 300_000 });
    assert.ok(delay <= 30_000, `got ${delay}`);
    assert.ok(delay >= 10_000, `got ${delay}`);
  });

  it('meets the design aim for 30-120 s renders that queue first: at most 4 checks, noticed within 10 %', () => {
    assert.ok(simulate(120_000).checks <= 6, 'with the default 60 s max, a 120 s render still needs few checks');
    for (const median of [undefined, 75_000]) {
      let totalChecks = 0;
      let totalLag = 0;
      const renders = [30_000, 45_000, 60_000, 75_000, 90_000, 105_000, 120_000];
      for (const renderMs of renders) {
        // polling.max bounds any single wait; at 60 s a 120 s render needs one more check by design.
        const { checks, lagMs } = simulate(renderMs, { medianRenderMs: median, maxMs: 120_000 });
        totalChecks += checks;
        totalLag += lagMs / renderMs;
        assert.ok(lagMs <= renderMs * 0.1, `median ${median}: render ${renderMs} ms noticed ${lagMs} ms late`);
      }
      assert.ok(totalChecks / renders.length <= 4, `median ${median}: average ${totalChecks / renders.length} checks`);
      assert.ok(totalLag / renders.length <= 0.06, `median ${median}: average lateness ${totalLag / renders.length}`);
    }
  });

  it('without progress, a median from earlier renders makes a typical render take about two checks', () => {
    const { checks, lagMs } = simulate(60_000, { medianRenderMs: 60_000 }, { reportProgress: false });
    assert.ok(checks <= 3, `checks ${checks}`);
    assert.ok(lagMs <= 6_000, `lag ${lagMs}`);
  });

  it('without any progress still notices completion within 10 % of a long render', () => {
    const { lagMs } = simulate(120_000, {}, { reportProgress: false });
    assert.ok(lagMs <= 12_000, `lag ${lagMs}`);
  });

  it('never polls faster than the floor', () => {
    assert.ok(nextPollDelay({ ...base, initialMs: 100, checks: 3, elapsedMs: 1_000, progress: 99 }) >= 100);
  });

  it('a gateway that refreshes progress only every 15 s (new-api) is not checked again and again on a stale reading', () => {
    // Seen: one item checked 9 times in 22 s, 1-5 s apart, at a constant 83 %.
    for (const renderMs of [60_000, 120_000, 300_000]) {
      const refreshMs = 15_000;
      let elapsed = 0;
      let checks = 0;
      let progress: number | undefined;
      let seenSince = 0;
      let firstProgress: ProgressSample | undefined;
      const perReading = new Map<number, number>();
      for (;;) {
        const unchangedForMs = progress === undefined ? undefined : elapsed - seenSince;
        elapsed += nextPollDelay({ ...base, initialMs: 2_000, checks, elapsedMs: elapsed, progress, firstProgress, unchangedForMs });
        checks++;
        if (elapsed >= renderMs) break;
        // What the gateway says: the reading of its last refresh.
        const refreshedAt = Math.floor(elapsed / refreshMs) * refreshMs;
        const reading = Math.floor((refreshedAt / renderMs) * 100);
        if (reading !== progress) seenSince = elapsed;
        progress = reading;
        perReading.set(refreshedAt, (perReading.get(refreshedAt) ?? 0) + 1);
        if (!firstProgress && progress > 0) firstProgress = { elapsedMs: elapsed, progress };
        assert.ok(checks < 100, 'polling must converge');
      }
      // Before anything changes, nothing says how often the gateway refreshes (the queue, at 0 %);
      // after that, no reading is seen by more than two checks.
      for (const [at, n] of perReading) {
        assert.ok(n <= (at === 0 ? 3 : 2), `${renderMs / 1000} s render: ${n} checks saw the reading refreshed at ${at / 1000} s`);
      }
    }
  });

  it('a reading that never moves until the end (a fixed percentage) still notices the end within half the render time', () => {
    // Seen with new-api's Seedance channel in the simulator: 30 % from the first check to the end;
    // the back-off doubled on each stale check and noticed a 5 s render after 17 s.
    for (const renderMs of [5_000, 60_000, 600_000]) {
      const initialMs = Math.min(2_000, renderMs / 10);
      let elapsed = 0;
      let checks = 0;
      let progress: number | undefined;
      let seenSince = 0;
      let firstProgress: ProgressSample | undefined;
      for (;;) {
        const unchangedForMs = progress === undefined ? undefined : elapsed - seenSince;
        elapsed += nextPollDelay({
          ...base,
          initialMs,
          maxMs: 600_000,
          checks,
          elapsedMs: elapsed,
          progress,
          firstProgress,
          unchangedForMs,
        });
        checks++;
        if (elapsed >= renderMs) break;
        if (progress === undefined) seenSince = elapsed;
        progress = 30;
        firstProgress ??= { elapsedMs: elapsed, progress };
        assert.ok(checks < 100, 'polling must converge');
      }
      const lag = elapsed - renderMs;
      assert.ok(lag <= renderMs * 0.5 + initialMs, `${renderMs / 1000} s render noticed ${lag / 1000} s late after ${checks} checks`);
    }
  });

  it('a reading that stood unchanged is waited on as long again, and never less than the initial delay', () => {
    const at = {
      ...base,
      initialMs: 2_000,
      checks: 5,
      elapsedMs: 60_000,
      progress: 83,
      firstProgress: { elapsedMs: 10_000, progress: 10 },
    };
    assert.ok(nextPollDelay({ ...at, unchangedForMs: 500 }) >= 2_000);
    assert.ok(nextPollDelay({ ...at, unchangedForMs: 8_000 }) >= 16_000);
    assert.ok(nextPollDelay({ ...at, unchangedForMs: 600_000 }) <= base.maxMs);
  });
});
