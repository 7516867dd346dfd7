// The end of polling (workflows/render.ts, workflows/polling.ts): a server's poll hint never holds
// a check back past polling.max, and no item ends timed_out without a status check made at or
// after its deadline. Both lost paid renders: the task had succeeded, reelflow never looked.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ManifestRow } from '../../../storage/manifest/row';
import { planFor, runJob, stubActivities, timeSkippingPerTest } from '../../support/time-skipping';

const SECOND = 1_000;

function rowsOf(events: ReturnType<typeof stubActivities>['events']): ManifestRow[] {
  return events.flatMap((e) => (e.kind === 'record' ? [e.row] : []));
}

describe('the end of polling', () => {
  const server = timeSkippingPerTest();

  it('bounds an absurd openai-poll-after-ms by polling.max: the finished render is found and downloaded', async () => {
    // As reported: polling.max 2 s, the item ended timed_out 93 s later after one check.
    const polling = { initialMs: 1 * SECOND, maxMs: 2 * SECOND, timeoutMs: 93 * SECOND };
    const plan = await planFor('absurd-hint', ['hinted'], { polling });
    const { stubs, events } = stubActivities(server.env, plan, { renderMs: 3 * SECOND });
    const answer = stubs.checkTask;
    const checkedAt: number[] = [];
    stubs.checkTask = async (input) => {
      checkedAt.push((await server.env.now()) - input.createdAt);
      return { ...(await answer(input)), pollAfterMs: 999_999_999_999 };
    };

    const result = await runJob(server.env, server.bundle, stubs, 'absurd-hint');

    assert.equal(result.counts.succeeded, 1, `item ended ${JSON.stringify(rowsOf(events).map((r) => [r.state, r.error]))}`);
    assert.ok(checkedAt.length >= 2, `checked ${checkedAt.length} time(s)`);
    const gaps = checkedAt.slice(1).map((at, i) => at - checkedAt[i]!);
    assert.ok(
      gaps.every((gap) => gap <= polling.maxMs + SECOND),
      `no wait between checks is longer than polling.max (2 s): ${gaps.join(', ')} ms`,
    );
  });

  it('makes a last status check at the deadline before ending an item timed_out', async () => {
    // The render ends at 90 s; the back-off after the check at 60 s would come after the 93 s
    // deadline, so the wait is cut there: the check at the deadline finds the video.
    const polling = { initialMs: 60 * SECOND, maxMs: 10 * 60 * SECOND, timeoutMs: 93 * SECOND };
    const plan = await planFor('deadline-check', ['late'], { polling });
    const { stubs, events } = stubActivities(server.env, plan, { renderMs: 90 * SECOND });
    const answer = stubs.checkTask;
    const checkedAt: number[] = [];
    stubs.checkTask = async (input) => {
      checkedAt.push((await server.env.now()) - input.createdAt);
      return answer(input);
    };

    const result = await runJob(server.env, server.bundle, stubs, 'deadline-check');

    assert.equal(result.counts.succeeded, 1, `item ended ${JSON.stringify(rowsOf(events).map((r) => [r.state, r.error]))}`);
    assert.ok(checkedAt.at(-1)! >= polling.timeoutMs, `the last check came at the deadline: ${checkedAt.join(', ')} ms`);
  });

  it('still ends an unfinished item timed_out after that last check', async () => {
    const polling = { initialMs: 60 * SECOND, maxMs: 10 * 60 * SECOND, timeoutMs: 93 * SECOND };
    const plan = await planFor('deadline-pending', ['never'], { polling });
    const { stubs, events } = stubActivities(server.env, plan, { renderMs: 3_600 * SECOND });
    const answer = stubs.checkTask;
    const checkedAt: number[] = [];
    stubs.checkTask = async (input) => {
      checkedAt.push((await server.env.now()) - input.createdAt);
      return answer(input);
    };

    const result = await runJob(server.env, server.bundle, stubs, 'deadline-pending');

    assert.equal(result.counts.timed_out, 1);
    assert.equal(rowsOf(events)[0]?.state, 'timed_out');
    assert.ok(checkedAt.at(-1)! >= polling.timeoutMs, `a last check at the deadline: ${checkedAt.join(', ')} ms`);
    assert.ok(checkedAt.length <= 3, `no checks past it: ${checkedAt.join(', ')} ms`);
  });
});
