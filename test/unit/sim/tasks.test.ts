import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Dice } from '../../../sim/prng';
import { matchRoute } from '../../../sim/routes';
import { TaskStore, type Task, videosStatus, viewAt } from '../../../sim/tasks';

const task = (over: Partial<Task> = {}): Task => ({
  id: 'task_a',
  protocol: 'general',
  model: 'm',
  prompt: 'p',
  seconds: 5,
  size: '1280x720',
  createdAt: 1_000_000,
  renderMs: 10_000,
  ...over,
});

test('the timeline walks NOT_START, SUBMITTED, QUEUED, IN_PROGRESS with moving progress, then SUCCESS', () => {
  const t = task();
  const at = (ms: number): ReturnType<typeof viewAt> => viewAt(t, t.createdAt + ms);
  assert.equal(at(0).status, 'NOT_START');
  assert.equal(at(700).status, 'SUBMITTED');
  assert.equal(at(1500).status, 'QUEUED');
  assert.equal(at(1500).progress, 0);
  assert.equal(at(3000).status, 'IN_PROGRESS');
  assert.ok(at(3000).progress < at(8000).progress);
  assert.ok(at(9999).progress <= 99);
  const done = at(10_000);
  assert.equal(done.status, 'SUCCESS');
  assert.equal(done.progress, 100);
  assert.equal(done.finishTime, 1010);
  assert.equal(viewAt(task({ failReason: 'x' }), t.createdAt + 10_000).status, 'FAILURE');
  assert.equal(viewAt(task({ renderMs: 0 }), t.createdAt).status, 'SUCCESS');
  assert.equal(videosStatus('SUBMITTED'), 'queued');
  assert.equal(videosStatus('IN_PROGRESS'), 'in_progress');
  assert.equal(videosStatus('FAILURE'), 'failed');
});

test('task ids replay for a seed', () => {
  const a = new TaskStore(new Dice(3));
  const b = new TaskStore(new Dice(3));
  const { id: _id, ...fields } = task();
  const ids = (s: TaskStore): string[] => Array.from({ length: 5 }, () => s.create(fields, 0).id);
  assert.deepEqual(ids(a), ids(b));
  assert.equal(a.size, 5);
});

test('routes', () => {
  assert.equal(matchRoute('POST', '/v1/video/generations')?.route.name, 'POST /v1/video/generations');
  assert.equal(matchRoute('GET', '/v1/video/generations/task_1')?.id, 'task_1');
  assert.equal(matchRoute('GET', '/v1/videos/task_1/content')?.route.kind, 'content');
  assert.equal(matchRoute('HEAD', '/v1/videos/task_1/content')?.route.kind, 'content');
  assert.equal(matchRoute('POST', '/v1/messages/')?.route.kind, 'messages');
  assert.equal(matchRoute('GET', '/v1/messages'), null);
  assert.equal(matchRoute('GET', '/v1/videos/a%20b'), null);
  assert.equal(matchRoute('GET', '/v2/videos'), null);
});
