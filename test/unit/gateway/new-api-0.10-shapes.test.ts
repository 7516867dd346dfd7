// new-api v0.10.0's answers, verbatim from test/gateways/OBSERVED.md: the create
// answers only `task_id`, a finished task carries its video address in `fail_reason` (no
// `result_url` key at all), and a failed Seedance task says only "task failed" while the
// upstream's reason is in `data.data.error`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractTaskId, parseTaskBody } from '../../../gateway/normalize';
import { registerSecret, unregisterSecret } from '../../../gateway/redact';

const SEEDANCE_SUCCESS = JSON.parse(
  '{"code":"success","message":"","data":{"task_id":"cgt-1795489389216-ac0ee7","action":"generate","status":"SUCCESS",' +
    '"fail_reason":"http://127.0.0.1:43231/files/cgt-1795489389216-ac0ee7.mp4","submit_time":1795489389,"start_time":0,' +
    '"finish_time":1795489402,"progress":"100%","data":{"content":{"video_url":"http://127.0.0.1:43231/files/cgt-1795489389216-ac0ee7.mp4"},' +
    '"created_at":1795489389,"duration":5,"framespersecond":24,"id":"cgt-1795489389216-ac0ee7","model":"seedance-1-0-pro-250528",' +
    '"ratio":"16:9","resolution":"720p","seed":42,"status":"succeeded","updated_at":1795489402,' +
    '"usage":{"completion_tokens":108900,"total_tokens":108900}}}}',
) as unknown;

const SEEDANCE_FAILURE = JSON.parse(
  '{"code":"success","message":"","data":{"task_id":"cgt-1795489389270-f3dc4c","action":"generate","status":"FAILURE",' +
    '"fail_reason":"task failed","submit_time":1795489389,"start_time":0,"finish_time":1795489402,"progress":"100%",' +
    '"data":{"created_at":1795489389,"duration":5,"error":{"code":"OutputVideoSensitiveContentDetected",' +
    '"message":"The render was blocked by the upstream"},"framespersecond":24,"id":"cgt-1795489389270-f3dc4c",' +
    '"model":"seedance-1-0-pro-250528","ratio":"16:9","resolution":"720p","seed":42,"status":"failed","updated_at":1795489402,' +
    '"usage":{"completion_tokens":0,"total_tokens":0}}}}',
) as unknown;

/** A Sora-channel task read through the general route: the content endpoint under new-api's ServerAddress. */
function soraViaGeneral(failReason: string): unknown {
  return {
    code: 'success',
    message: '',
    data: {
      task_id: 'video_dee3a1',
      action: 'generate',
      status: 'SUCCESS',
      fail_reason: failReason,
      submit_time: 1795489389,
      start_time: 0,
      finish_time: 1795489402,
      progress: '100%',
      data: { id: 'video_dee3a1', object: 'video', status: 'completed', progress: 100 },
    },
  };
}

describe('new-api v0.10.0 create answer', () => {
  it('takes the task id from {"task_id": "cgt-…"}, the only key', () => {
    assert.equal(extractTaskId(JSON.parse('{"task_id":"cgt-1795489375811-c9c855"}')), 'cgt-1795489375811-c9c855');
  });
});

describe('new-api v0.10.0 finished task', () => {
  it('takes the video address from fail_reason when there is no result_url', () => {
    const task = parseTaskBody(SEEDANCE_SUCCESS);
    assert.deepEqual(task, {
      taskId: 'cgt-1795489389216-ac0ee7',
      state: 'succeeded',
      rawStatus: 'SUCCESS',
      progress: 100,
      resultUrl: 'http://127.0.0.1:43231/files/cgt-1795489389216-ac0ee7.mp4',
    });
  });
  it('takes the ServerAddress content endpoint of a Sora task from fail_reason', () => {
    const task = parseTaskBody(soraViaGeneral('http://new-api.test:3000/v1/videos/video_dee3a1/content'));
    assert.equal(task.resultUrl, 'http://new-api.test:3000/v1/videos/video_dee3a1/content');
  });
  it('reads a Gemini-channel (Veo) task on the general route: lower-case status, a reason in url is no address', () => {
    // Verbatim from smoke.test.ts (test/gateways/OBSERVED.md, "Veo through the Gemini providers").
    const id = 'bW9kZWxzL3Zlby0zLjEtZmFzdC1nZW5lcmF0ZS0wMDEvb3BlcmF0aW9ucy83ODlkNmRjMTgyYzI';
    const veo = (status: string, url: string) => ({
      code: 'success',
      message: '',
      data: { error: null, format: 'mp4', metadata: null, status, task_id: id, url },
    });
    // The video is then fetched from the content endpoint through the job's own base addresses (new-api.test.ts).
    const done = parseTaskBody(veo('succeeded', `http://new-api.test:3000/v1/videos/${id}/content`));
    assert.deepEqual([done.taskId, done.state, done.rawStatus], [id, 'succeeded', 'succeeded']);
    assert.equal(parseTaskBody(veo('processing', '')).state, 'running');
    const failed = parseTaskBody(veo('failed', 'The render was blocked by the upstream'));
    assert.equal(failed.state, 'failed');
    assert.equal(failed.resultUrl, undefined, 'a reason is not an address');
  });
  it('falls back to the upstream content.video_url when fail_reason holds none', () => {
    const body = structuredClone(SEEDANCE_SUCCESS) as { data: { fail_reason: string } };
    body.data.fail_reason = '';
    assert.equal(parseTaskBody(body).resultUrl, 'http://127.0.0.1:43231/files/cgt-1795489389216-ac0ee7.mp4');
  });
  it('prefers result_url where a gateway gives both', () => {
    const body = soraViaGeneral('https://elsewhere.example/v.mp4') as { data: Record<string, unknown> };
    body.data['result_url'] = 'https://cdn.example.com/v.mp4';
    assert.equal(parseTaskBody(body).resultUrl, 'https://cdn.example.com/v.mp4');
  });
  it('takes a fail_reason that is no http(s) address as no address, and the task still succeeded', () => {
    for (const text of ['task failed', 'ftp://files.example/v.mp4', 'javascript:alert(1)', '/v1/videos/x/content', 'x'.repeat(20_000)]) {
      const task = parseTaskBody(soraViaGeneral(text));
      assert.equal(task.state, 'succeeded', text.slice(0, 40));
      assert.equal(task.resultUrl, undefined, text.slice(0, 40));
      assert.equal(task.failReason, undefined, text.slice(0, 40));
    }
  });
  it('never takes an address from fail_reason before the task has finished', () => {
    const body = soraViaGeneral('http://127.0.0.1:43231/files/x.mp4') as { data: Record<string, unknown> };
    body.data['status'] = 'IN_PROGRESS';
    body.data['progress'] = '30%';
    const task = parseTaskBody(body);
    assert.equal(task.state, 'running');
    assert.equal(task.resultUrl, undefined);
  });
});

describe('new-api v0.10.0 failed Seedance task', () => {
  it('reports the upstream reason from data.data.error, not only "task failed"', () => {
    const task = parseTaskBody(SEEDANCE_FAILURE);
    assert.equal(task.state, 'failed');
    assert.equal(task.resultUrl, undefined);
    assert.equal(task.failReason, 'task failed: The render was blocked by the upstream (OutputVideoSensitiveContentDetected)');
  });
  it('uses the nested reason alone when fail_reason is empty, and the code when there is no message', () => {
    const body = structuredClone(SEEDANCE_FAILURE) as { data: { fail_reason: string; data: { error: Record<string, unknown> } } };
    body.data.fail_reason = '';
    assert.equal(parseTaskBody(body).failReason, 'The render was blocked by the upstream (OutputVideoSensitiveContentDetected)');
    body.data.data.error = { code: 'OutputVideoSensitiveContentDetected' };
    assert.equal(parseTaskBody(body).failReason, 'OutputVideoSensitiveContentDetected');
  });
  it('does not repeat a reason fail_reason already gives', () => {
    const body = structuredClone(SEEDANCE_FAILURE) as { data: { fail_reason: string } };
    body.data.fail_reason = 'The render was blocked by the upstream (OutputVideoSensitiveContentDetected)';
    assert.equal(parseTaskBody(body).failReason, 'The render was blocked by the upstream (OutputVideoSensitiveContentDetected)');
  });
  it('bounds and redacts the nested reason', () => {
    const key = 'sk-nested-reason-key-0123456789';
    registerSecret(key);
    try {
      const body = structuredClone(SEEDANCE_FAILURE) as { data: { data: { error: Record<string, unknown> } } };
      body.data.data.error = { code: 'E', message: `upstream saw Authorization: Bearer ${key}\n${'y'.repeat(50_000)}` };
      const reason = parseTaskBody(body).failReason ?? '';
      assert.ok(!reason.includes(key), reason.slice(0, 120));
      assert.ok(reason.startsWith('task failed: upstream saw Authorization: Bearer [REDACTED]'), reason.slice(0, 120));
      assert.ok(reason.length <= 1_001, `${reason.length} characters`);
      assert.ok(!reason.includes('\n'));
    } finally {
      unregisterSecret(key);
    }
  });
});
