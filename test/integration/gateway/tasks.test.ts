import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TaskNotFoundError, createGatewayClient } from '../../../gateway/index';
import { KEY, harness, render, waitDone, type Harness } from './helpers';

describe('task status', () => {
  let h: Harness;
  before(async () => {
    h = await harness({ ports: [0, 0], faults: { notExistWindowMs: 600 } });
  });
  after(async () => h.close());

  it('task_not_exist inside the grace period reads as pending', async () => {
    const createdAt = Date.now();
    const created = await h.client.createTask(render('not-yet'));
    const early = await h.client.getTask({ taskId: created.taskId, protocol: 'general' }, { createdAt });
    assert.equal(early.state, 'pending');
    assert.equal(early.rawStatus, 'task_not_exist');
    const done = await waitDone(h.client, { taskId: created.taskId, protocol: 'general' }, createdAt);
    assert.equal(done.state, 'succeeded');
    assert.match(done.resultUrl ?? '', /^http:\/\/127\.0\.0\.1:/);
    assert.equal(done.progress, 100);
  });

  it('task_not_exist after the grace period -> TaskNotFoundError', async () => {
    const short = createGatewayClient({ baseUrls: h.sim.urls, apiKey: KEY, notExistGraceMs: 100 });
    try {
      const created = await short.createTask(render('lost-task'));
      await assert.rejects(
        short.getTask({ taskId: created.taskId, protocol: 'general' }, { createdAt: Date.now() - 200 }),
        (e: unknown) => {
          assert.ok(e instanceof TaskNotFoundError);
          assert.equal(e.kind, 'task_not_found');
          assert.match(e.message, /lost/);
          return true;
        },
      );
      await assert.rejects(short.getTask({ taskId: 'task_never_created', protocol: 'openai' }), TaskNotFoundError);
    } finally {
      await short.close();
    }
  });

  it('failures carry a reason and no result address (both protocols)', async () => {
    h.sim.setFaults({ failRate: 1, notExistWindowMs: 0 });
    try {
      for (const protocol of ['general', 'openai'] as const) {
        const created = await h.client.createTask(
          render(`fails-${protocol}`, { protocol, ...(protocol === 'openai' ? { model: 'veo-3.1-fast-generate-001' } : {}) }),
        );
        const done = await waitDone(h.client, { taskId: created.taskId, protocol });
        assert.equal(done.state, 'failed');
        assert.ok((done.failReason ?? '').length > 0);
        assert.equal(done.resultUrl, undefined);
      }
    } finally {
      h.sim.setFaults({ failRate: 0 });
    }
  });

  it('reads survive resets and 5xx', async () => {
    const created = await h.client.createTask(render('flaky-reads'));
    h.sim.setFaults({ resetRate: 0.2, errorRate: 0.2, scope: ['retrieve'] });
    try {
      const done = await waitDone(h.client, { taskId: created.taskId, protocol: 'general' });
      assert.equal(done.state, 'succeeded');
    } finally {
      h.sim.setFaults({ resetRate: 0, errorRate: 0, scope: [] });
    }
  });
});
