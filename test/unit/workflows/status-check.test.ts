// Status checks in RenderWorkflow (workflows/render.ts): a local activity while the gateway answers
// in seconds, a regular activity for a check that needs longer. A local activity runs inside a
// workflow task: long gateway retries there stalled workflow tasks (and the SDK printed
// "Workflow task duration exceeded" warnings) during a gateway outage.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ManifestRow } from '../../../storage/manifest/row';
import { planFor, runJob, timeSkippingPerTest, stubActivities } from '../../support/time-skipping';

const MINUTE = 60_000;
const polling = { initialMs: MINUTE, maxMs: 5 * MINUTE, timeoutMs: 60 * MINUTE };

type Check = { prompt: string; local: boolean };

describe('status checks', () => {
  const server = timeSkippingPerTest();

  // About 10 s: the slow check holds the worker for its local time in real time.
  it('makes a check that outlasts its few local seconds again as a regular activity, then goes back to local ones', async () => {
    const plan = await planFor('slow-check', ['slow gateway', 'fast gateway'], { polling });
    const { stubs, events } = stubActivities(server.env, plan, { renderMs: 10 * MINUTE });
    const checks: Check[] = [];
    const answer = stubs.checkTask;
    let slowOnce = true;
    stubs.checkTask = async (input) => {
      const context = Context.current();
      const prompt = input.taskId.split('#')[0]!;
      checks.push({ prompt, local: context.info.isLocal });
      if (prompt === 'slow gateway' && context.info.isLocal && slowOnce) {
        slowOnce = false;
        await context.sleep(30_000); // a gateway failing over for 30 s; the local activity is cut first
      }
      return answer(input);
    };

    const result = await runJob(server.env, server.bundle, stubs, 'slow-check');

    assert.equal(result.counts.succeeded, 2);
    const slow = checks.filter((c) => c.prompt === 'slow gateway').map((c) => c.local);
    assert.deepEqual(slow.slice(0, 2), [true, false], 'the cut local check is made again as a regular activity');
    assert.ok(slow.length > 3 && slow.slice(2).every(Boolean), `later checks are local again: ${slow.join(',')}`);
    assert.ok(
      checks.filter((c) => c.prompt === 'fast gateway').every((c) => c.local),
      'a gateway that answers at once is checked locally only',
    );
    const rows = events.flatMap((e) => (e.kind === 'record' ? [e.row] : [])) as ManifestRow[];
    assert.deepEqual(rows.map((r) => r.state).sort(), ['succeeded', 'succeeded']);
  });

  it('does not repeat a check whose failure is final', async () => {
    const plan = await planFor('final-check', ['gone'], { polling });
    const { stubs, events } = stubActivities(server.env, plan, { renderMs: 10 * MINUTE });
    const checks: boolean[] = [];
    stubs.checkTask = async () => {
      checks.push(Context.current().info.isLocal);
      throw ApplicationFailure.create({ type: 'task_not_found', nonRetryable: true, message: 'task gone#1 was not found on the gateway' });
    };

    const result = await runJob(server.env, server.bundle, stubs, 'final-check');

    assert.equal(result.counts.failed, 1);
    assert.deepEqual(checks, [true]);
    const row = events.find((e) => e.kind === 'record');
    assert.equal(row?.kind === 'record' ? row.row.error?.kind : undefined, 'task_not_found');
  });
});
