// A create activity that never ran (Temporal lost its task on the way to a worker, or the worker
// died before sending) is made again; one that may have sent its request is not (docs/protocol.md §6).
//
// Temporal cannot be made to lose a task on demand, so this worker runs the real activities except
// for the first create of two items, which behaves as each case looks to the server: a task that
// was started and then never heard from, with and without the "about to send" heartbeat that the
// real create records before its first byte. Everything else (server, simulator, workflows,
// storage, the retried creates) is real.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from '../../activities/definitions';
import { closeActivityResources } from '../../activities/context';
import type { ManifestRow } from '../../storage/manifest';
import { workflowSource } from '../../worker/bundle';
import { TASK_QUEUE } from '../../client/task-queue';
import { connectClient } from '../../worker/temporal';
import { jobWorkflowId, renderWorkflowId } from '../../workflows/ids';
import { runCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';
import { acceptKeylessJobsInThisWorker } from '../../activities/job-key-check';

// The jobs here are built by the test, with no starter's key fingerprint: this process carries them as a
// worker started with --accept-keyless-jobs does (docs/keys.md).
acceptKeylessJobsInThisWorker(true);

const KEY = 'sk-test-lost-create-5c4b3a29';

/** Settles only when the worker cancels it (at shutdown): a task nobody works on. */
function neverHeardFrom(): Promise<never> {
  return new Promise((_, reject) => {
    Context.current().cancelled.catch(reject);
  });
}

describe('create activities that never ran', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0, 0], renderMs: [300, 800], videoBytes: 64 * 1024, seed: 11 });
  let client: Client | undefined;
  after(async () => {
    await client?.connection.close();
  });

  it('are created again when nothing was sent, and end unknown when the request may have left', { timeout: 150_000 }, async () => {
    const dir = tempDir('reelflow-lost-create-');
    const job = writeJob(dir, {
      name: 'lost',
      baseUrls: e2e.sim.urls,
      items: [
        { id: 'never-ran', prompt: 'lost: task never ran' },
        { id: 'marked', prompt: 'lost: marked, then never heard from' },
        { id: 'normal', prompt: 'lost: normal' },
      ],
    });
    const calls = new Map<string, number>();
    const createTaskMarked: typeof activities.createTaskMarked = async (input) => {
      const prompt = input.request.prompt;
      calls.set(prompt, (calls.get(prompt) ?? 0) + 1);
      const first = calls.get(prompt) === 1;
      if (first && prompt === 'lost: task never ran') return neverHeardFrom();
      if (first && prompt === 'lost: marked, then never heard from') {
        const context = Context.current();
        await context.client.activity.heartbeat(context.info.taskToken, { createMaySend: true });
        return neverHeardFrom();
      }
      return activities.createTaskMarked(input);
    };

    process.env.GATEWAY_API_KEY = KEY;
    const connection = await NativeConnection.connect({ address: e2e.temporal.address });
    const worker = await Worker.create({
      connection,
      namespace: 'default',
      taskQueue: TASK_QUEUE,
      ...workflowSource(),
      activities: { ...activities, createTaskMarked },
      shutdownGraceTime: '1s',
    });
    const running = worker.run();
    try {
      const started = await runCli(['run', job, '--no-worker', '--detach'], { env: e2e.env });
      assert.equal(started.code, 0, started.stderr);
      client = await connectClient({
        address: e2e.temporal.address,
        namespace: 'default',
        connectionOptions: { address: e2e.temporal.address },
        description: 'test',
      });
      await client.workflow.getHandle(jobWorkflowId('lost')).result();
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
      await closeActivityResources();
    }

    const rows = new Map<string, ManifestRow>();
    for (const line of readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)) {
      const row = JSON.parse(line) as ManifestRow;
      rows.set(row.key, row);
    }
    const creates = e2e.sim.stats().createsByPrompt;

    // Lost before it ran: timed out on its heartbeat, created again, rendered once.
    assert.equal(rows.get('never-ran')?.state, 'succeeded', JSON.stringify(rows.get('never-ran')));
    assert.equal(creates['lost: task never ran'], 1);
    const history = await client.workflow.getHandle(renderWorkflowId(jobWorkflowId('lost'), 'never-ran')).fetchHistory();
    const timedOut = history.events!.filter((e) => e.activityTaskTimedOutEventAttributes);
    assert.equal(timedOut.length, 1, 'the first create timed out');
    assert.equal(
      timedOut[0]!.activityTaskTimedOutEventAttributes!.failure?.timeoutFailureInfo?.timeoutType,
      4 /* TIMEOUT_TYPE_HEARTBEAT */,
    );
    assert.equal(history.events!.filter((e) => e.activityTaskCompletedEventAttributes).length, 2, 'second create and download completed');

    // It may have sent its request: never created again, ends unknown with the reason.
    const marked = rows.get('marked');
    assert.equal(marked?.state, 'unknown', JSON.stringify(marked));
    assert.equal(marked?.error?.kind, 'activity_timeout');
    assert.match(marked?.error?.message ?? '', /create did not finish in time \(HEARTBEAT\)/);
    assert.equal(creates['lost: marked, then never heard from'] ?? 0, 0);
    assert.equal(calls.get('lost: marked, then never heard from'), 1, 'no second create activity');
    assert.equal(calls.get('lost: task never ran'), 2);

    assert.equal(rows.get('normal')?.state, 'succeeded');
    assert.equal(creates['lost: normal'], 1);

    // Both paths replay deterministically through the current workflow code.
    for (const key of ['never-ran', 'marked']) {
      const workflowId = renderWorkflowId(jobWorkflowId('lost'), key);
      const recorded = await client.workflow.getHandle(workflowId).fetchHistory();
      await Worker.runReplayHistory(workflowSource(), recorded, workflowId);
    }
  });
});
