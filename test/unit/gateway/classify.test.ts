import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyGatewayError, parseErrorBody } from '../../../gateway/classify';
import {
  AuthError,
  type GatewayError,
  GatewayUnavailableError,
  InvalidRequestError,
  ModelUnavailableError,
  QuotaExhaustedError,
  QuotaOrPermissionError,
  RouteNotFoundError,
  RateLimitedError,
  TaskNotFoundError,
  DownloadError,
} from '../../../gateway/errors';
import { createRetryIsSafe } from '../../../gateway/retry';

const BASE = 'http://127.0.0.1:8787';
const bodies = {
  task: '{"code":"task_not_exist","message":"task_not_exist: task_abc","data":null}',
  openai: '{"error":{"message":"Invalid token (request id: 2025)","type":"new_api_error","code":""}}',
  anthropic: '{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}',
  empty: '',
  html: '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>',
};

describe('parseErrorBody', () => {
  it('reads all five shapes', () => {
    assert.deepEqual(parseErrorBody(bodies.task), { shape: 'task', message: 'task_not_exist: task_abc', code: 'task_not_exist' });
    assert.deepEqual(parseErrorBody(bodies.openai), {
      shape: 'openai',
      message: 'Invalid token (request id: 2025)',
      type: 'new_api_error',
    });
    assert.deepEqual(parseErrorBody(bodies.anthropic), {
      shape: 'anthropic',
      message: 'Number of requests has exceeded your rate limit',
      type: 'rate_limit_error',
    });
    assert.deepEqual(parseErrorBody(bodies.empty), { shape: 'empty' });
    assert.deepEqual(parseErrorBody(undefined), { shape: 'empty' });
    assert.deepEqual(parseErrorBody(bodies.html), { shape: 'html', message: 'HTML page: 502 Bad Gateway' });
    assert.deepEqual(parseErrorBody('upstream timed out'), { shape: 'text', message: 'upstream timed out' });
    assert.deepEqual(parseErrorBody('{broken json'), { shape: 'text', message: '{broken json' });
  });
  it('clips very long messages', () => {
    const long = parseErrorBody(JSON.stringify({ error: { message: 'x'.repeat(5000) } }));
    assert.ok((long.message ?? '').length < 400);
  });
});

function classify(status: number, body: string, extra: Partial<Parameters<typeof classifyGatewayError>[0]> = {}): GatewayError {
  return classifyGatewayError({ status, body, baseUrl: BASE, nowMs: 0, ...extra });
}

describe('classifyGatewayError', () => {
  it('401 -> AuthError naming the key variable, fatal for the job', () => {
    const e = classify(401, bodies.openai, { apiKeyEnv: 'GATEWAY_API_KEY', operation: 'create' });
    assert.ok(e instanceof AuthError);
    assert.equal(e.kind, 'auth');
    assert.equal(e.retryable, false);
    assert.equal(e.status, 401);
    assert.equal(e.baseUrl, BASE);
    assert.match(e.message, /\$GATEWAY_API_KEY/);
    assert.match(e.message, /Invalid token/);
  });
  it('401 with an Anthropic-style body and with no body', () => {
    assert.ok(classify(401, '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}') instanceof AuthError);
    assert.ok(classify(401, '') instanceof AuthError);
  });
  it('403 -> QuotaOrPermissionError naming model and token group', () => {
    const e = classify(403, '{"error":{"message":"quota exhausted","type":"new_api_error"}}', { model: 'veo-3', operation: 'create' });
    assert.ok(e instanceof QuotaOrPermissionError);
    assert.equal(e.kind, 'quota_or_permission');
    assert.match(e.message, /"veo-3"/);
    assert.match(e.message, /token group/);
  });
  it('a used-up quota or balance, in new-api, LiteLLM and OpenAI words -> QuotaExhaustedError, not a permission or a rate limit', () => {
    const cases: Array<[number, string]> = [
      [403, '{"error":{"message":"用户额度不足, 剩余额度: ＄0.000000","type":"new_api_error","code":"insufficient_user_quota"}}'],
      [403, '{"error":{"message":"pre-consume failed","type":"new_api_error","code":"pre_consume_token_quota_failed"}}'],
      [401, '{"error":{"message":"该令牌额度已用尽 (request id: 2025)","type":"new_api_error","code":""}}'],
      [403, '{"error":{"message":"账户已透支, 当前欠费 ＄1.00, 请充值补足欠款后再继续调用","type":"new_api_error"}}'],
      [
        400,
        '{"error":{"message":"Budget has been exceeded! Current cost: 10.2, Max budget: 10.0","type":"budget_exceeded","param":null,"code":"400"}}',
      ],
      [
        429,
        '{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}',
      ],
    ];
    for (const [status, body] of cases) {
      const e = classify(status, body, { model: 'veo-3', operation: 'create' });
      assert.ok(e instanceof QuotaExhaustedError, `${status} ${body} -> ${e.name}`);
      assert.equal(e.kind, 'quota_exhausted');
      assert.equal(e.retryable, false);
      assert.match(e.message, /top it up/);
    }
  });
  const catalogAdvice = /check the model name against the catalog and that the key was created in the matching token group/;
  it('404 on create -> ModelUnavailableError with the catalog/token-group advice', () => {
    const e = classify(404, '{"error":{"message":"model not found","type":"new_api_error"}}', {
      model: 'seedance-1-0-pro-250528',
      operation: 'create',
    });
    assert.ok(e instanceof ModelUnavailableError);
    assert.equal(e.kind, 'model_unavailable');
    assert.match(e.message, /model "seedance-1-0-pro-250528" is not available to this key/);
    assert.match(e.message, catalogAdvice);
    assert.equal((e as ModelUnavailableError).model, 'seedance-1-0-pro-250528');
  });
  it('503 model_not_found -> ModelUnavailableError, not a gateway outage', () => {
    const body =
      '{"error":{"message":"No available channel for model veo-3 under group default (request id: x)","type":"new_api_error","code":"model_not_found"}}';
    const e = classify(503, body, { model: 'veo-3', operation: 'create' });
    assert.ok(e instanceof ModelUnavailableError);
    assert.match(e.message, catalogAdvice);
    assert.ok(!(e instanceof GatewayUnavailableError), 'a missing model is no reason to fail over');
    const byText = classify(503, '{"error":{"message":"No available channel for model veo-3 under group vip"}}', { model: 'veo-3' });
    assert.ok(byText instanceof ModelUnavailableError);
  });
  it('404 on retrieve -> TaskNotFoundError; 400 task_not_exist -> TaskNotFoundError', () => {
    const e = classify(404, '{"error":{"message":"Task not found","type":"invalid_request_error"}}', {
      operation: 'retrieve',
      taskId: 't1',
    });
    assert.ok(e instanceof TaskNotFoundError);
    assert.equal((e as TaskNotFoundError).taskId, 't1');
    const n = classify(400, bodies.task, { operation: 'retrieve', taskId: 'task_abc' });
    assert.ok(n instanceof TaskNotFoundError);
    assert.equal(n.kind, 'task_not_found');
  });
  it('400 -> InvalidRequestError with the server message', () => {
    const e = classify(400, '{"error":{"message":"seconds must be a string","type":"invalid_request"}}', { operation: 'create' });
    assert.ok(e instanceof InvalidRequestError);
    assert.equal(e.kind, 'invalid_request');
    assert.match(e.message, /seconds must be a string/);
    assert.equal(e.retryable, false);
  });
  it('429 -> RateLimitedError, Retry-After in seconds or as a date, empty body', () => {
    const e = classify(429, '', { headers: { 'retry-after': '2' } });
    assert.ok(e instanceof RateLimitedError);
    assert.equal((e as RateLimitedError).retryAfterMs, 2000);
    assert.equal(e.retryable, true);
    const d = classifyGatewayError({ status: 429, headers: { 'retry-after': 'Thu, 01 Jan 1970 00:00:05 GMT' }, nowMs: 1000 });
    assert.equal((d as RateLimitedError).retryAfterMs, 4000);
    assert.equal((classify(429, bodies.anthropic) as RateLimitedError).retryAfterMs, undefined);
    assert.match(classify(429, bodies.anthropic).message, /exceeded your rate limit/);
  });
  for (const status of [500, 502, 503, 504, 529]) {
    it(`${status} -> GatewayUnavailableError (retryable, fail over)`, () => {
      const e = classify(status, status === 502 ? bodies.html : '{"error":{"message":"upstream error","type":"<nil>"}}');
      assert.ok(e instanceof GatewayUnavailableError);
      assert.equal(e.kind, 'gateway_unavailable');
      assert.equal(e.retryable, true);
      assert.equal(e.status, status);
    });
  }
  it('reads HTML proxy pages into a message', () => {
    assert.match(classify(504, bodies.html).message, /HTML page: 502 Bad Gateway/);
  });
  it('download errors keep their own class', () => {
    const e = classify(400, '{"error":{"message":"Task is not completed yet, current status: IN_PROGRESS"}}', { operation: 'download' });
    assert.ok(e instanceof DownloadError);
    assert.equal(e.retryable, true);
  });
});

describe('createRetryIsSafe (docs/protocol.md §6)', () => {
  it('allows only provably unprocessed creates', () => {
    assert.equal(createRetryIsSafe(new GatewayUnavailableError('refused', { requestSent: false, code: 'ECONNREFUSED' })), true);
    assert.equal(createRetryIsSafe(new GatewayUnavailableError('reset', { requestSent: true, code: 'ECONNRESET' })), false);
    assert.equal(createRetryIsSafe(classify(429, '')), true);
    assert.equal(createRetryIsSafe(classify(503, '', { headers: { 'retry-after': '1' } })), true);
    assert.equal(createRetryIsSafe(classify(503, '')), false);
    assert.equal(createRetryIsSafe(classify(502, bodies.html, { headers: { 'retry-after': '1' } })), false);
    assert.equal(createRetryIsSafe(classify(504, bodies.html)), false);
    assert.equal(createRetryIsSafe(classify(500, '')), false);
    assert.equal(createRetryIsSafe(classify(400, '')), false);
    assert.equal(
      createRetryIsSafe(
        classify(503, '{"error":{"message":"No available channel for model m under group g","code":"model_not_found"}}', {
          headers: { 'retry-after': '1' },
        }),
      ),
      false,
    );
  });
});

describe("real gateways' error shapes (#15 item 2; test/gateways/OBSERVED.md)", () => {
  const create = { operation: 'create' as const, model: 'veo-3.1-fast-generate-001', baseUrl: 'http://gw' };

  it('a missing route is told apart from an unknown model', () => {
    const fastapi = classifyGatewayError({ ...create, status: 404, body: '{"detail":"Not Found"}' });
    assert.ok(fastapi instanceof RouteNotFoundError, String(fastapi));
    assert.match(fastapi.message, /no such route \(HTTP 404 from http:\/\/gw: Not Found\)/);
    const newApi = classifyGatewayError({
      ...create,
      status: 404,
      body: '{"error":{"message":"Invalid URL (GET /v1/video/nothing)","type":"invalid_request_error","param":"","code":""}}',
    });
    assert.ok(newApi instanceof RouteNotFoundError, String(newApi));
  });

  it("LiteLLM's unknown model (400 Invalid model name) is a model error", () => {
    const e = classifyGatewayError({
      ...create,
      status: 400,
      body: '{"error":{"message":"/videos: Invalid model name passed in model=nope. Call `/v1/models` to view available models for your key.","type":"invalid_request_error","param":null,"code":"400"}}',
    });
    assert.ok(e instanceof ModelUnavailableError, String(e));
    assert.match(e.message, /Invalid model name passed in model=nope/);
  });

  it("LiteLLM's Gemini provider wraps Veo's error in two words and a numeric code: the upstream's words still show, unnested", () => {
    // As smoke.test.ts saw it from litellm 1.106.2 in front of a Gemini API answering 500 (test/gateways/OBSERVED.md).
    const inner = JSON.stringify({ error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } });
    const body = JSON.stringify({
      error: {
        message: `litellm.InternalServerError: GeminiException InternalServerError - ${inner}\n\nLiteLLM: model group 'veo-3.1-fast-generate-001' failed with the error above. No fallback was attempted.`,
        type: null,
        param: null,
        code: '500',
      },
    });
    const parsed = parseErrorBody(body);
    assert.equal(parsed.message, 'An internal error has occurred.');
    assert.equal(parsed.code, 'INTERNAL');
  });

  it("LiteLLM's wrapped upstream error shows the upstream's own words, unnested, and its code", () => {
    const inner = JSON.stringify({
      error: { message: "The model 'no-such-model' does not exist", type: 'invalid_request_error', param: null, code: 'model_not_found' },
    });
    const body = JSON.stringify({
      error: {
        message: `litellm.NotFoundError: OpenAIException - ${inner}\n\nLiteLLM: model group 'upstream-unknown' failed with the error above. No fallback was attempted.`,
        type: 'invalid_request_error',
        param: null,
        code: '404',
      },
    });
    const e = classifyGatewayError({ ...create, status: 404, body });
    assert.ok(e instanceof ModelUnavailableError, String(e));
    assert.match(e.message, /HTTP 404 from http:\/\/gw: The model 'no-such-model' does not exist\)/);
    assert.ok(!e.message.includes('litellm.NotFoundError'));
  });

  it("LiteLLM's wrong key without a database (400 no_db_connection) is a key error", () => {
    const e = classifyGatewayError({
      ...create,
      status: 400,
      apiKeyEnv: 'GATEWAY_API_KEY',
      body: '{"error":{"message":"No connected db.","type":"no_db_connection","param":null,"code":"400"}}',
    });
    assert.ok(e instanceof AuthError, String(e));
    assert.match(e.message, /refused the key in \$GATEWAY_API_KEY \(HTTP 400 from http:\/\/gw: No connected db\.\)/);
  });
});
