// A job whose workflow fails ends the command with the failure's cause (what failed, where, and
// why), never with the SDK's bare "Workflow execution failed". JobWorkflow on the time-skipping test
// server, its plan activity failing as a bad manifest line once made it fail, read through
// client/control.ts jobResult as `run` and `cancel` read it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { jobResult } from '../../../client/control';
import { planFor, runJob, stubActivities, timeSkippingPerTest } from '../../support/time-skipping';

describe("a failed job's cause reaches the command", () => {
  const server = timeSkippingPerTest();

  it('jobResult names the activity and its message', async () => {
    const plan = await planFor('failing-plan', ['one', 'two']);
    const { stubs } = stubActivities(server.env, plan, { renderMs: 1_000 });
    const failing = {
      ...stubs,
      async readPlanItems(): Promise<never> {
        throw ApplicationFailure.create({
          type: 'TypeError',
          nonRetryable: true,
          message: "/jobs/out/manifest.jsonl:1: Cannot read properties of undefined (reading 'length')",
        });
      },
    };
    let failure: unknown;
    await assert.rejects(
      runJob(server.env, server.bundle, failing, 'failing-plan', {}, async (handle) => {
        failure = await jobResult({ workflow: server.env.workflows } as unknown as Client, handle.workflowId).then(
          () => undefined,
          (error: unknown) => error,
        );
      }),
    );
    assert.ok(failure instanceof Error, 'the job failed');
    assert.doesNotMatch(failure.message, /^Workflow execution failed$/);
    assert.match(failure.message, /reelflow-failing-plan/);
    assert.match(failure.message, /readPlanItems/);
    assert.match(failure.message, /manifest\.jsonl:1: Cannot read properties of undefined/);
  });
});
