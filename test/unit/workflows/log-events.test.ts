// The job's and its items' log events (docs/logs.md) as the workflows write them, on the
// time-skipping test server with stub activities: started once, one continued_as_new per new run,
// ended once with the counts; each item created and ended; each line with the job id.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import { logWorkersTo, planFor, runJob, stubActivities, timeSkippingPerTest } from '../../support/time-skipping';

const entries: LogEntry[] = [];
logWorkersTo(new DefaultLogger('DEBUG', (entry) => entries.push(entry)));

describe('workflow log events', () => {
  const server = timeSkippingPerTest();

  it('a job that continues as new: job.started, job.continued_as_new per run, item events, job.ended with counts', async () => {
    const prompts = Array.from({ length: 12 }, (_, i) => `logged ${i + 1}`);
    const plan = await planFor('logged', prompts, {
      concurrency: { maxInFlight: 4 },
      polling: { initialMs: 250, maxMs: 500, timeoutMs: 600_000 },
    });
    const { stubs } = stubActivities(server.env, plan, { renderMs: 1_000 });
    const result = await runJob(server.env, server.bundle, stubs, 'logged', { historyBudget: 40 });
    assert.equal(result.counts.succeeded, 12);

    const events = entries
      .filter((e) => e.meta?.event !== undefined)
      .map((e) => ({ ...e.meta, level: e.level }) as Record<string, unknown> & { level: string });
    const of = (name: string) => events.filter((e) => e.event === name);
    assert.ok(
      events.every((e) => e.jobId === 'reelflow-logged'),
      JSON.stringify(events.filter((e) => e.jobId !== 'reelflow-logged')),
    );
    assert.equal(of('job.started').length, 1);
    assert.equal(of('job.started')[0]!.items, 12);
    // A workflow task the server refused (a child's report arrived as the job continued as new) is
    // run again, not replayed: its lines may come twice (docs/logs.md). One number per new run.
    const runs = [...new Set(of('job.continued_as_new').map((e) => e.run))];
    assert.ok(runs.length >= 1, 'continued as new');
    assert.deepEqual(
      runs,
      runs.map((_, i) => i + 2),
    );
    const [ended] = of('job.ended');
    assert.equal(of('job.ended').length, 1);
    assert.equal((ended!.counts as Record<string, number>).succeeded, 12);
    assert.equal(ended!.runs, runs.length + 1);
    for (const name of ['item.created', 'item.downloaded', 'item.ended']) {
      assert.equal(new Set(of(name).map((e) => e.key)).size, 12, name);
    }
    assert.ok(of('item.ended').every((e) => e.state === 'succeeded' && e.level === 'INFO' && e.kind === undefined));
    assert.ok(of('item.status').some((e) => e.to === 'succeeded'));
  });
});
