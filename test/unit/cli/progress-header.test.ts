// The progress header on narrow terminals: counts, rate and ETA stay; the bar, the
// job's name and the wide spacing go first.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { progressHeader } from '../../../cli/progress';
import { displayWidth, plainText } from '../../../client/terminal-text';
import type { JobProgress } from '../../../workflows/types';

const progress: JobProgress = {
  job: 'spring-campaign-with-a-long-name',
  state: 'running',
  total: 80,
  started: 40,
  counts: { succeeded: 17, failed: 2, timed_out: 0, canceled: 0, unknown: 0, skipped: 3, pending: 40, in_flight: 18 },
  inFlight: [],
  recentFailures: [],
  startedAt: 0,
  etaMs: 754_000,
  runs: 1,
};
// eslint-disable-next-line no-control-regex -- colour sequences start with ESC
const strip = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');

describe('progressHeader', () => {
  it('while the plan is read: the job preparing, an empty bar, no counts of a total not known yet', () => {
    const preparing: JobProgress = { ...progress, state: 'preparing', total: 0, started: 0, etaMs: undefined };
    const h = strip(progressHeader(preparing, undefined, 139));
    assert.equal(h, `[${'-'.repeat(24)}] spring-campaign-with-a-long-name: preparing: reading the job file and its outputs`);
    assert.equal(strip(progressHeader(preparing, undefined, 20)), 'preparing');
  });

  it('on a wide terminal: the bar, the job, every count, the rate and the ETA', () => {
    const h = strip(progressHeader(progress, 0.42, 139));
    assert.match(
      h,
      /^\[[#-]{24}\] spring-campaign-with-a-long-name: 22\/80 {2}17 ok {2}3 already done {2}2 failed {2}18 in flight {2}0\.42\/s {2}ETA /,
    );
  });

  it('at 60 columns: every count, the rate and the ETA, in shorter words, within the width', () => {
    const h = progressHeader(progress, 0.42, 59);
    assert.ok(displayWidth(h) <= 59, `${displayWidth(h)} > 59: ${strip(h)}`);
    assert.equal(strip(h), '22/80 17 ok 3 done 2 failed 18 flying 0.42/s ETA 12m34s');
  });

  it('at 50 columns, a running job with no failures keeps everything', () => {
    const simple = { ...progress, counts: { ...progress.counts, failed: 0, skipped: 0 } };
    const h = strip(progressHeader(simple, 1.5, 49));
    assert.equal(h, '17/80  17 ok  18 in flight  1.5/s  ETA 12m34s');
  });

  it('drops the bar before the job name, and the job name before any count', () => {
    const at70 = strip(progressHeader(progress, 0.42, 110));
    assert.match(at70, /^spring-campaign-with-a-long-name: 22\/80 /);
    const at60 = strip(progressHeader(progress, 0.42, 59));
    assert.match(at60, /^22\/80 /);
  });

  it('a name that could hold escape sequences stays plain text', () => {
    assert.equal(plainText(strip(progressHeader({ ...progress, job: 'x' }, undefined, 200))).includes('\u001b'), false);
  });
});
