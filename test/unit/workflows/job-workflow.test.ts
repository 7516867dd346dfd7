// JobWorkflow on the time-skipping test server with stub activities: the sliding window, pacing,
// continue-as-new and cancel, with renders of minutes that take milliseconds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cancelSignal, progressQuery } from '../../../workflows/job';
import { planFor, runJob, timeSkippingPerTest, stubActivities, type StubEvent } from '../../support/time-skipping';

const MINUTE = 60_000;
const polling = { initialMs: MINUTE, maxMs: 5 * MINUTE, timeoutMs: 10 * 60 * MINUTE };

/** Items between their create and their manifest line, after each event. */
function inFlightAfterEach(events: StubEvent[]): number[] {
  let inFlight = 0;
  return events.map((e) => (inFlight += e.kind === 'create' ? 1 : -1));
}

describe('JobWorkflow', () => {
  const server = timeSkippingPerTest();

  it('keeps max_in_flight items rendering and refills the window as each one ends', async () => {
    const prompts = Array.from({ length: 10 }, (_, i) => `window ${i + 1}`);
    const plan = await planFor('window', prompts, { concurrency: { maxInFlight: 3 }, polling });
    const { stubs, events } = stubActivities(server.env, plan, { renderMs: 20 * MINUTE });

    const result = await runJob(server.env, server.bundle, stubs, 'window');

    assert.equal(result.counts.succeeded, 10);
    const inFlight = inFlightAfterEach(events);
    assert.equal(Math.max(...inFlight), 3, `in flight after each event: ${inFlight.join(' ')}`);
    // Refilled: every create after the first three follows an item's end at once (same server
    // time give or take the round trips), so the window stays full while items are left.
    const creates = events.filter((e) => e.kind === 'create');
    const records = events.filter((e) => e.kind === 'record');
    for (const [i, create] of creates.slice(3).entries()) {
      assert.ok(create.at - records[i]!.at < 5_000, `create ${i + 4} came ${create.at - records[i]!.at} ms after end ${i + 1}`);
    }
    // Four waves of 20-minute renders, not ten.
    const makespan = records.at(-1)!.at - creates[0]!.at;
    assert.ok(makespan >= 4 * 20 * MINUTE && makespan < 4 * 25 * MINUTE, `makespan ${makespan / MINUTE} min`);
  });

  it('paces the creates at creates_per_minute', async () => {
    const prompts = Array.from({ length: 5 }, (_, i) => `paced ${i + 1}`);
    const plan = await planFor('paced', prompts, { concurrency: { maxInFlight: 10, createsPerMinute: 2 }, polling });
    const { stubs, events } = stubActivities(server.env, plan, { renderMs: 5 * MINUTE });

    const result = await runJob(server.env, server.bundle, stubs, 'paced');

    assert.equal(result.counts.succeeded, 5);
    const at = events.filter((e) => e.kind === 'create').map((e) => e.at);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    // 30 s apart (the jitter of the round trips aside), and no slower than that.
    assert.ok(
      gaps.every((gap) => gap > 29_000 && gap < 35_000),
      `gaps between creates: ${gaps.join(', ')} ms`,
    );
  });

  it('continues as new when its history grows and loses no item', async () => {
    const prompts = Array.from({ length: 16 }, (_, i) => `continued ${i + 1}`);
    // Renders of a second, in real time: once a child ends after the run that started it continued
    // as new, the test server stops skipping time (test/support/time-skipping.ts).
    const plan = await planFor('continued', prompts, {
      concurrency: { maxInFlight: 4 },
      polling: { initialMs: 250, maxMs: 500, timeoutMs: 10 * MINUTE },
    });
    const { stubs, events, creates } = stubActivities(server.env, plan, { renderMs: 1_000 });

    let firstRunId = '';
    const result = await runJob(server.env, server.bundle, stubs, 'continued', { historyBudget: 40 }, async (handle) => {
      firstRunId = handle.firstExecutionRunId;
    });

    assert.equal(result.counts.succeeded, 16);
    assert.deepEqual([...creates.values()], Array(16).fill(1), 'each item created once');
    assert.equal(new Set(events.filter((e) => e.kind === 'record').map((e) => e.prompt)).size, 16);
    let runs = 1;
    for (let runId = firstRunId; ;) {
      const history = await server.env.workflows.getHandle('reelflow-continued', runId).fetchHistory();
      const next = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
      if (!next) break;
      runs += 1;
      runId = next;
    }
    assert.ok(runs >= 3, `ran in ${runs} runs`);
  });

  it('on cancel, ends the items in flight canceled and starts no other', { timeout: 60_000 }, async () => {
    const prompts = Array.from({ length: 5 }, (_, i) => `canceled ${i + 1}`);
    const plan = await planFor('canceled', prompts, { concurrency: { maxInFlight: 2 }, polling });
    const { stubs, events } = stubActivities(server.env, plan, { renderMs: 60 * MINUTE });

    const result = await runJob(server.env, server.bundle, stubs, 'canceled', {}, async (handle) => {
      // Time runs at normal speed until the result is awaited: the renders are still in flight.
      while (events.filter((e) => e.kind === 'create').length < 2) await new Promise((r) => setTimeout(r, 50));
      assert.equal((await handle.query(progressQuery)).counts.in_flight, 2);
      await handle.signal(cancelSignal, 'test');
    });

    assert.equal(result.canceled, true);
    assert.deepEqual(result.counts, { succeeded: 0, failed: 0, timed_out: 0, canceled: 2, unknown: 0, skipped: 0 });
    const rows = events.flatMap((e) => (e.kind === 'record' ? [`${e.prompt}: ${e.row.state} (${e.row.error?.kind})`] : []));
    assert.deepEqual(rows.sort(), ['canceled 1: canceled (canceled)', 'canceled 2: canceled (canceled)']);
    assert.equal(events.filter((e) => e.kind === 'create').length, 2, 'no item started after the cancel');
  });
});
