// A job that meets a cause no item can avoid (a refused key, a missing model) or the same item-level
// failure again and again stops starting items; the items in flight finish; items never created stay
// not started (no manifest row). And an item that already holds a task asks that task before paying
// for a new one (docs/reruns.md). JobWorkflow and RenderWorkflow on the time-skipping test server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/activity';
import { FailureType } from '../../../domain/failures';
import type { PriorTask } from '../../../activities/plan';
import { planFor, runJob, timeSkippingPerTest, stubActivities } from '../../support/time-skipping';

const MINUTE = 60_000;
const polling = { initialMs: MINUTE, maxMs: 5 * MINUTE, timeoutMs: 60 * MINUTE };

describe('JobWorkflow stops on a job-wide cause', () => {
  const server = timeSkippingPerTest();

  it('starts no more items, lets the items in flight finish, and leaves the failed create not started', async () => {
    const prompts = Array.from({ length: 6 }, (_, i) => `stop ${i + 1}`);
    const plan = await planFor('jobwide', prompts, { concurrency: { maxInFlight: 3 }, polling });
    const { stubs, events, creates } = stubActivities(server.env, plan, {
      renderMs: 20 * MINUTE,
      beforeCreate: async (prompt) => {
        if (prompt === 'stop 3') {
          throw ApplicationFailure.create({
            type: FailureType.auth,
            nonRetryable: true,
            message: 'the gateway refused the key in $GATEWAY_API_KEY (HTTP 401: 该令牌状态不可用)',
          });
        }
      },
    });

    const result = await runJob(server.env, server.bundle, stubs, 'jobwide');

    const rows = events.flatMap((e) => (e.kind === 'record' ? [`${e.prompt}: ${e.row.state}`] : []));
    assert.deepEqual(rows.sort(), ['stop 1: succeeded', 'stop 2: succeeded'], 'in flight finished; the refused create recorded nothing');
    assert.deepEqual([...creates.keys()].sort(), ['stop 1', 'stop 2', 'stop 3'], 'no item started after the cause');
    assert.equal(result.counts.succeeded, 2);
    assert.equal(result.counts.failed, 0);
    assert.equal(result.counts.canceled, 0);
    assert.equal(result.stoppedBy?.kind, FailureType.auth);
    assert.equal(result.stoppedBy?.exitCode, 2);
    assert.match(result.stoppedBy?.message ?? '', /GATEWAY_API_KEY/);
    assert.equal(result.notStarted, 4);
  });

  it('every base address unreachable past the retry budget: exit 3, the item not started', async () => {
    const prompts = Array.from({ length: 4 }, (_, i) => `down ${i + 1}`);
    const plan = await planFor('unreachable', prompts, { concurrency: { maxInFlight: 1 }, polling });
    const { stubs, events } = stubActivities(server.env, plan, {
      renderMs: MINUTE,
      beforeCreate: async (prompt) => {
        if (prompt === 'down 2') {
          throw ApplicationFailure.create({
            type: FailureType.gatewayUnavailable,
            nonRetryable: true,
            message: 'http://127.0.0.1:9: connect ECONNREFUSED (every base address tried)',
          });
        }
      },
    });
    const result = await runJob(server.env, server.bundle, stubs, 'unreachable');
    const rows = events.flatMap((e) => (e.kind === 'record' ? [`${e.prompt}: ${e.row.state}`] : []));
    assert.deepEqual(rows, ['down 1: succeeded']);
    assert.equal(result.stoppedBy?.exitCode, 3);
    assert.equal(result.stoppedBy?.kind, FailureType.gatewayUnavailable);
    assert.equal(result.notStarted, 3);
  });

  it('stops after stop_after_failures identical item-level failures', async () => {
    const prompts = Array.from({ length: 8 }, (_, i) => `refused ${i + 1}`);
    const plan = await planFor('repeated', prompts, {
      concurrency: { maxInFlight: 1 },
      polling,
      retries: { create: 'safe', download: 5, stopAfterFailures: 3 },
    });
    let n = 0;
    const { stubs, events } = stubActivities(server.env, plan, {
      renderMs: MINUTE,
      beforeCreate: async () => {
        n += 1;
        throw ApplicationFailure.create({
          type: 'invalid_request',
          nonRetryable: true,
          message: `the gateway rejected the request (HTTP 400: content policy violation, request id ${1000 + n})`,
        });
      },
    });

    const result = await runJob(server.env, server.bundle, stubs, 'repeated');

    const rows = events.flatMap((e) => (e.kind === 'record' ? [`${e.prompt}: ${e.row.state}`] : []));
    assert.deepEqual(rows, ['refused 1: failed', 'refused 2: failed', 'refused 3: failed']);
    assert.equal(result.stoppedBy?.kind, 'repeated_failure');
    assert.equal(result.stoppedBy?.exitCode, 1);
    assert.match(result.stoppedBy?.message ?? '', /3 items failed the same way/);
    assert.match(result.stoppedBy?.message ?? '', /content policy/);
  });

  it('with stop_after_failures: 0 runs every item however alike their failures', async () => {
    const prompts = Array.from({ length: 6 }, (_, i) => `alike ${i + 1}`);
    const plan = await planFor('alike', prompts, {
      concurrency: { maxInFlight: 2 },
      polling,
      retries: { create: 'safe', download: 5, stopAfterFailures: 0 },
    });
    const { stubs } = stubActivities(server.env, plan, {
      renderMs: MINUTE,
      beforeCreate: async () => {
        throw ApplicationFailure.create({ type: 'invalid_request', nonRetryable: true, message: 'content policy violation' });
      },
    });
    const result = await runJob(server.env, server.bundle, stubs, 'alike');
    assert.equal(result.counts.failed, 6);
    assert.equal(result.stoppedBy, undefined);
  });
});

describe('RenderWorkflow reuses the task an item already holds', () => {
  const server = timeSkippingPerTest();

  it('downloads a finished task, keeps polling a running one, and creates only when the task is gone', async () => {
    const plan = await planFor('resume', ['finished before', 'still rendering', 'gone', 'never created'], { polling });
    const { stubs, events, creates } = stubActivities(server.env, plan, { renderMs: 20 * MINUTE });
    const downloaded: string[] = [];
    const now = await server.env.now();
    const priors: Record<string, PriorTask> = {
      'finished before': { taskId: 'old-finished', protocol: 'general', createdAt: now - 30 * MINUTE, baseUrl: 'http://127.0.0.1:9' },
      'still rendering': { taskId: 'old-running', protocol: 'general', createdAt: now - 5 * MINUTE, baseUrl: 'http://127.0.0.1:9' },
      gone: { taskId: 'old-gone', protocol: 'general', createdAt: now - 30 * MINUTE, baseUrl: 'http://127.0.0.1:9' },
    };
    const resumed = {
      ...stubs,
      async readPlanItems({ offset, limit }: { offset: number; limit: number }) {
        const items = plan.items.slice(offset, offset + limit).map((item) => {
          const prior = priors[item.request.prompt];
          return prior ? { ...item, prior } : item;
        });
        return { items, nextOffset: offset + items.length };
      },
      async checkTask(input: Parameters<typeof stubs.checkTask>[0]) {
        if (input.taskId === 'old-gone') {
          throw ApplicationFailure.create({ type: 'task_not_found', nonRetryable: true, message: 'task old-gone was not found' });
        }
        return stubs.checkTask(input);
      },
      async downloadVideo(input: Parameters<typeof stubs.downloadVideo>[0]) {
        downloaded.push(input.taskId);
        return stubs.downloadVideo(input);
      },
    };

    const result = await runJob(server.env, server.bundle, resumed, 'resume');

    assert.equal(result.counts.succeeded, 4);
    assert.deepEqual([...creates.keys()].sort(), ['gone', 'never created'], 'creates only for the gone task and the new item');
    assert.ok(downloaded.includes('old-finished') && downloaded.includes('old-running'), `downloaded ${downloaded.join(', ')}`);
    const rows = new Map(events.flatMap((e) => (e.kind === 'record' ? [[e.prompt, e.row] as const] : [])));
    assert.equal(rows.get('finished before')?.task_id, 'old-finished');
    assert.equal(rows.get('still rendering')?.task_id, 'old-running');
    assert.equal(rows.get('gone')?.task_id, 'gone#1');
  });
});
