// The job's input, built once (client/start-job.ts) for `run` and for a schedule's runs: the fields
// each carries, in the order `run` and `schedule apply` have always written them.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jobInput, scheduledJobAction, startQueue } from '../../../client/start-job';
import { isRunTaskQueue, TASK_QUEUE } from '../../../client/task-queue';
import { loadJobFile } from '../../../jobfile';
import type { Plan } from '../../../jobfile/plan';
import type { InputsRef } from '../../../storage/inputs';
import { HEAD, RUN_DATE, tempJobDir } from '../jobfile/helpers';

async function planOf(yaml: string): Promise<Plan> {
  const dir = tempJobDir({ 'job.yaml': yaml });
  const loaded = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE });
  assert.ok(loaded.ok);
  return loaded.plan;
}

describe('the job input of run and schedule', () => {
  it("a run's input: every choice of the run, the prices it priced with and who started it", async () => {
    const plan = await planOf(`${HEAD}items:\n  - prompt: one\n`);
    const inputs: InputsRef = { index: 'a'.repeat(64), location: { kind: 'dir', dir: '/tmp/in' } };
    const input = jobInput(plan, { inputs, allowRead: ['/data'] }, { retryStates: ['failed'], budgetUsd: 5, notify: ['team'], redo: [] });
    assert.deepEqual(Object.keys(input), [
      'jobFile',
      'runDate',
      'retryStates',
      'inputs',
      'budgetUsd',
      'redo',
      'allowRead',
      'notify',
      'prices',
      'startedAs',
    ]);
    assert.equal(input.jobFile, plan.jobFile);
    assert.deepEqual(input.inputs, inputs);
    assert.equal(input.runDate, RUN_DATE);
    assert.deepEqual(input.retryStates, ['failed']);
    assert.equal(input.budgetUsd, 5);
    assert.deepEqual(input.allowRead, ['/data']);
    assert.deepEqual(input.notify, ['team']);
    assert.deepEqual(input.prices, plan.pricing ?? {});
  });

  it('a plain run carries no empty choices but always its retry states and prices', async () => {
    const plan = await planOf(`${HEAD}items:\n  - prompt: one\n`);
    const input = jobInput(plan, { allowRead: [] }, { retryStates: [], notify: [] });
    assert.deepEqual(Object.keys(input), ['jobFile', 'runDate', 'retryStates', 'prices', 'startedAs']);
  });

  it("a schedule's runs carry no run date (each dates itself), no retry states, prices or starter", async () => {
    const plan = await planOf(`${HEAD}items:\n  - prompt: one\n`);
    const action = scheduledJobAction(plan, { allowRead: ['/data'] });
    assert.equal(action.taskQueue, TASK_QUEUE);
    assert.equal(action.workflowId, 'reelflow-t');
    assert.deepEqual(action.input, { jobFile: plan.jobFile, allowRead: ['/data'] });
  });

  it("the key's fingerprint goes into both when the starter's key is set", async () => {
    const plan = await planOf(`${HEAD}items:\n  - prompt: one\n`);
    const variable = plan.gateway.apiKeyEnv;
    const before = process.env[variable];
    process.env[variable] = 'sk-test-start-job';
    try {
      const run = jobInput(plan, { allowRead: [] }, { retryStates: [], notify: [] });
      const scheduled = scheduledJobAction(plan, { allowRead: [] }).input;
      // Salted afresh each time: both are the starter key's fingerprint for this job, never the key.
      assert.match(run.keyFingerprint ?? '', /^hmac-sha256-/);
      assert.match(scheduled.keyFingerprint ?? '', /^hmac-sha256-/);
      assert.ok(!JSON.stringify(run).includes('sk-test-start-job'));
    } finally {
      if (before === undefined) delete process.env[variable];
      else process.env[variable] = before;
    }
  });

  it("the queue: the run's own worker's, a new one of its own for a background worker, else the shared one", () => {
    assert.equal(startQueue('reelflow-run-x', false), 'reelflow-run-x');
    assert.ok(isRunTaskQueue(startQueue(undefined, true)));
    assert.equal(startQueue(undefined, false), TASK_QUEUE);
  });
});
