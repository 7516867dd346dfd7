import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createGatewayClient } from '../../../gateway/client';
import { extractTaskId, isTerminalState, mapTaskStatus, parseProgress, parseTaskBody } from '../../../gateway/normalize';

describe('the client takes base addresses by the job file rule (jobfile/values normaliseBaseUrl)', () => {
  it('normalises with one warning per changed address and drops duplicates', async () => {
    const warnings: string[] = [];
    const client = createGatewayClient({
      baseUrls: ['http://127.0.0.1:9/v1/', 'http://127.0.0.1:9', 'http://127.0.0.2:9'],
      apiKey: 'sk-unit-normalise-0123',
      log: (_level, message) => warnings.push(message),
    });
    await client.close();
    assert.deepEqual(client.baseUrls, ['http://127.0.0.1:9', 'http://127.0.0.2:9']);
    assert.deepEqual(warnings, [
      'base address "http://127.0.0.1:9/v1/": removed the trailing slash and the trailing /v1; ' +
        'using "http://127.0.0.1:9" (the client adds /v1/… itself)',
    ]);
  });
  it('refuses what the job file refuses', () => {
    for (const bad of ['ftp://x', 'not a url', 'http://127.0.0.1:9/?k=1']) {
      assert.throws(() => createGatewayClient({ baseUrls: [bad], apiKey: 'sk-unit-normalise-0123' }), TypeError, bad);
    }
  });
});

describe('extractTaskId', () => {
  it('reads id, then task_id, then data.task_id, then data.id', () => {
    assert.equal(extractTaskId({ id: 'a', task_id: 'b' }), 'a');
    assert.equal(extractTaskId({ task_id: 'b' }), 'b');
    assert.equal(extractTaskId({ id: '', task_id: 'b' }), 'b');
    assert.equal(extractTaskId({ data: { task_id: 'c', id: 'd' } }), 'c');
    assert.equal(extractTaskId({ data: { id: 'd' } }), 'd');
    assert.equal(extractTaskId({ code: 'x', data: null }), undefined);
    assert.equal(extractTaskId('nope'), undefined);
  });
});

describe('mapTaskStatus', () => {
  const table: [string, string][] = [
    ['NOT_START', 'pending'],
    ['SUBMITTED', 'pending'],
    ['QUEUED', 'pending'],
    ['queued', 'pending'],
    ['IN_PROGRESS', 'running'],
    ['in_progress', 'running'],
    ['processing', 'running'],
    ['Running', 'running'],
    ['SUCCESS', 'succeeded'],
    ['success', 'succeeded'],
    ['succeeded', 'succeeded'],
    ['completed', 'succeeded'],
    ['FAILURE', 'failed'],
    ['failure', 'failed'],
    ['failed', 'failed'],
    ['cancelled', 'failed'],
    ['CANCELED', 'failed'],
    ['expired', 'failed'],
    ['UNKNOWN', 'unknown'],
    ['unknown', 'unknown'],
    ['rendering-frames', 'running'],
    ['', 'running'],
  ];
  for (const [raw, state] of table) {
    it(`${JSON.stringify(raw)} -> ${state}`, () => assert.equal(mapTaskStatus(raw).state, state));
  }
  it('gives a reason for cancelled and expired', () => {
    assert.match(mapTaskStatus('Cancelled').impliedReason ?? '', /cancelled/);
    assert.match(mapTaskStatus('EXPIRED').impliedReason ?? '', /expired/);
    assert.equal(mapTaskStatus('FAILURE').impliedReason, undefined);
  });
  it('treats only succeeded and failed as terminal', () => {
    assert.equal(isTerminalState('succeeded'), true);
    assert.equal(isTerminalState('failed'), true);
    assert.equal(isTerminalState('unknown'), false);
    assert.equal(isTerminalState('running'), false);
  });
});

describe('parseProgress', () => {
  it('reads percent strings and numbers', () => {
    assert.equal(parseProgress('50%'), 50);
    assert.equal(parseProgress(' 7 % '), 7);
    assert.equal(parseProgress(50), 50);
    assert.equal(parseProgress('42'), 42);
    assert.equal(parseProgress(150), 100);
    assert.equal(parseProgress(-3), 0);
    assert.equal(parseProgress('soon'), undefined);
    assert.equal(parseProgress(null), undefined);
  });
});

describe('parseTaskBody', () => {
  it('reads the general wrapper on success', () => {
    const t = parseTaskBody({
      code: 'success',
      message: '',
      data: { task_id: 't1', status: 'SUCCESS', progress: '100%', result_url: 'https://cdn.example.com/v.mp4?sig=1', fail_reason: '' },
    });
    assert.deepEqual(t, {
      taskId: 't1',
      state: 'succeeded',
      rawStatus: 'SUCCESS',
      progress: 100,
      resultUrl: 'https://cdn.example.com/v.mp4?sig=1',
    });
  });
  it('never takes result_url as an address unless success and http(s)', () => {
    const running = parseTaskBody({ data: { status: 'IN_PROGRESS', result_url: 'https://cdn/x.mp4' } });
    assert.equal(running.resultUrl, undefined);
    const odd = parseTaskBody({ data: { status: 'SUCCESS', result_url: 'ftp://x/y' } });
    assert.equal(odd.resultUrl, undefined);
    assert.equal(odd.state, 'succeeded');
  });
  it('takes the failure reason from fail_reason, then error.message, then result_url', () => {
    assert.equal(parseTaskBody({ data: { status: 'FAILURE', fail_reason: 'nsfw', result_url: 'other' } }).failReason, 'nsfw');
    assert.equal(
      parseTaskBody({ data: { status: 'FAILURE', fail_reason: '', result_url: 'upstream said no' } }).failReason,
      'upstream said no',
    );
    const failed = parseTaskBody({ id: 'v1', status: 'failed', progress: 30, error: { code: 'x', message: 'content policy' } });
    assert.equal(failed.failReason, 'content policy');
    assert.equal(failed.resultUrl, undefined);
    assert.equal(failed.taskId, 'v1');
    assert.equal(failed.progress, 30);
  });
  it('gives cancelled/expired a reason when the body has none', () => {
    assert.match(parseTaskBody({ id: 'v', status: 'cancelled' }).failReason ?? '', /cancelled/);
    assert.equal(parseTaskBody({ id: 'v', status: 'expired' }).state, 'failed');
  });
  it('reads the bare video object', () => {
    const t = parseTaskBody({ id: 'task_1', object: 'video', status: 'in_progress', progress: 42, error: null });
    assert.deepEqual(t, { taskId: 'task_1', state: 'running', rawStatus: 'in_progress', progress: 42 });
  });
});
