// Pure parts of the gateway profiles: LiteLLM's id codec and a slowly refreshing gateway's readings.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeLitellmId, encodeLitellmId, upstreamIdFor } from '../../../sim/litellm';
import { mulberry32 } from '../../../sim/prng';
import { readingAt } from '../../../sim/refresh';
import { matchRoute } from '../../../sim/routes';
import type { Task } from '../../../sim/tasks';

test("LiteLLM's id is video_ and base64 of provider, model id and upstream id (the id in OBSERVED.md decodes)", () => {
  const observed =
    'video_bGl0ZWxsbTpjdXN0b21fbGxtX3Byb3ZpZGVyOm9wZW5haTttb2RlbF9pZDpzb3JhLTI7dmlkZW9faWQ6dmlkZW9fMjM0MTBjMDc3ODdlZjQ4OTcxMTg1MTczNWE5OTIxMGI=';
  assert.deepEqual(decodeLitellmId(observed), { modelId: 'sora-2', upstreamId: 'video_23410c07787ef489711851735a99210b' });
  assert.equal(encodeLitellmId('sora-2', 'video_23410c07787ef489711851735a99210b'), observed);
  assert.deepEqual(decodeLitellmId(encodeLitellmId('', 'video_1')), { modelId: '', upstreamId: 'video_1' });
  assert.equal(decodeLitellmId('task_doesnotexist'), undefined);
  assert.equal(decodeLitellmId('video_bm90IGxpdGVsbG0='), undefined);
});

test('every simulated LiteLLM id holds +, / and = (a path that is not percent-encoded breaks on each one)', () => {
  const random = mulberry32(7);
  for (const model of ['veo-3.1-fast-generate-001', 'veo-3.1-generate-001', 'm', 'a-much-longer-model-name-x']) {
    for (let i = 0; i < 50; i++) {
      const id = encodeLitellmId(model, upstreamIdFor(model, random));
      assert.match(id, /\+/, id);
      assert.match(id, /\//, id);
      assert.match(id, /=$/, id);
      assert.ok(id.length >= 130, `${id.length} characters`);
      assert.equal(decodeLitellmId(id)?.modelId, model);
    }
  }
});

test("LiteLLM's routes: videos and Messages with or without /v1, ids percent-decoded, no general protocol", () => {
  const id = encodeLitellmId('veo-3.1-fast-generate-001', upstreamIdFor('veo-3.1-fast-generate-001', mulberry32(1)));
  const encoded = encodeURIComponent(id);
  assert.equal(matchRoute('GET', `/v1/videos/${encoded}`, 'litellm')?.id, id);
  assert.equal(matchRoute('GET', `/videos/${encoded}/content`, 'litellm')?.route.kind, 'content');
  assert.equal(matchRoute('POST', '/videos', 'litellm')?.route.kind, 'create');
  assert.equal(matchRoute('POST', '/v1/messages', 'litellm')?.route.kind, 'messages');
  assert.equal(matchRoute('GET', `/v1/videos/${id}`, 'litellm'), null, 'an unencoded / splits the path');
  assert.equal(matchRoute('POST', '/v1/video/generations', 'litellm'), null);
  assert.equal(matchRoute('GET', '/v1/video/generations/task_1', 'litellm'), null);
  assert.equal(matchRoute('GET', '/v1/v1/videos/x', 'litellm'), null);
});

test('a gateway refreshing every 15 s repeats the last round: NOT_START until the first round reads the task', () => {
  const startedAt = 1_000_000;
  const task: Task = {
    id: 't',
    protocol: 'general',
    model: 'm',
    prompt: 'p',
    seconds: 5,
    size: '1280x720',
    createdAt: startedAt + 500,
    renderMs: 40_000,
  };
  const at = (ms: number) => readingAt(task, task.createdAt + ms, startedAt, 15_000);
  assert.deepEqual([at(0).round, at(0).view.status, at(0).view.progress], [0, 'NOT_START', 0]);
  assert.equal(at(14_000).round, 0, 'the first round is at 14.5 s after the create');
  assert.equal(at(14_500).round, 1);
  assert.deepEqual(at(14_500).view, at(29_000).view, 'checks between rounds see the same reading');
  assert.equal(at(29_500).round, 2);
  assert.notDeepEqual(at(29_500).view, at(14_500).view);
  assert.equal(at(40_500).view.status, 'IN_PROGRESS', 'finished upstream at 40 s, not read until 44.5 s');
  assert.equal(at(44_500).view.status, 'SUCCESS');
  const live = readingAt(task, task.createdAt + 40_000, startedAt, 0);
  assert.equal(live.view.status, 'SUCCESS', 'refresh 0: every check reads live');
});
