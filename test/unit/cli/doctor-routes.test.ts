// What the doctor reads from one route probe's answer, with the answers the real gateways gave
// (test/gateways/OBSERVED.md), the simulator's, and the shapes of things that are not gateways.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewayNeeds } from '../../../client/doctor/gateway';
import { litellmVersion, litellmWarning } from '../../../client/doctor/litellm';
import { readRoute, routeRequest, type RouteName, type RouteVerdict } from '../../../client/doctor/routes';
import type { PlanItem } from '../../../jobfile/plan';

const LITELLM_HEADERS = { 'content-type': 'application/json', 'x-litellm-version': '1.106.2', 'x-litellm-call-id': 'c0ffee' };
const JSON_HEADERS = { 'content-type': 'application/json' };

function verdict(
  route: RouteName,
  status: number,
  body: unknown,
  headers: Record<string, string> = JSON_HEADERS,
  keySent = true,
): RouteVerdict {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return readRoute(route, { status, text, headers }, keySent).verdict;
}

describe('doctor: reading a video route probe (a status check of a task that cannot exist)', () => {
  it('a task-not-found answer means the route exists, in each gateway shape', () => {
    // new-api v0.10.0 and the simulator, both routes
    assert.equal(verdict('general', 400, { code: 'task_not_exist', message: 'task_not_exist', data: null }), 'serves');
    assert.equal(verdict('openai', 400, { code: 'task_not_exist', message: 'task_not_exist', data: null }), 'serves');
    // the simulator's /v1/videos/{id}
    assert.equal(
      verdict('openai', 404, { error: { message: 'Task not found', type: 'invalid_request_error', code: 'task_not_found' } }),
      'serves',
    );
    // LiteLLM with an id it can decode: the upstream's 404, wrapped
    const wrapped =
      'litellm.BadRequestError: OpenAIException - {"error":{"message":"Video not found","type":"invalid_request_error","param":null,"code":"not_found"}}' +
      "\n\nLiteLLM: model group 'veo-3.1-fast-generate-001' failed with the error above. No fallback was attempted.";
    assert.equal(
      verdict('openai', 404, { error: { message: wrapped, type: 'invalid_request_error', param: null, code: '404' } }),
      'serves',
    );
  });

  it("LiteLLM's 500 from inside the route (it sends an id it cannot decode to a default provider) means the route exists", () => {
    const message =
      'litellm.InternalServerError: InternalServerError: OpenAIException - Cannot connect to host api.openai.com:443 ssl:<ssl.SSLContext object at 0x7fcf> [Name or service not known]';
    const body = { error: { message, type: 'internal_server_error', param: null, code: '500' } };
    assert.equal(verdict('openai', 500, body, LITELLM_HEADERS), 'serves');
    // What it answers to the doctor's probe, which names a provider that does not exist so as to stay inside the proxy.
    const local = { error: { message: "litellm.APIConnectionError: 'reelflow-doctor-probe' is not a valid LlmProviders", code: '500' } };
    assert.equal(verdict('openai', 500, local, LITELLM_HEADERS), 'serves');
    // The words alone are enough when a proxy in front strips the headers.
    assert.equal(verdict('openai', 500, local), 'serves');
  });

  it('a 404 on the route itself means it is missing: FastAPI, new-api, a plain web server', () => {
    assert.equal(verdict('general', 404, { detail: 'Not Found' }), 'missing');
    assert.equal(
      verdict('general', 404, {
        error: { message: 'Invalid URL (GET /v1/video/generations/x)', type: 'invalid_request_error', param: '', code: '' },
      }),
      'missing',
    );
    assert.equal(verdict('openai', 404, '404 page not found', { 'content-type': 'text/plain' }), 'missing');
    assert.equal(
      verdict('openai', 404, '<html><head><title>404 Not Found</title></head></html>', { 'content-type': 'text/html' }),
      'missing',
    );
    assert.equal(verdict('openai', 404, ''), 'missing');
    assert.equal(verdict('openai', 405, { detail: 'Method Not Allowed' }), 'missing');
    assert.equal(verdict('openai', 501, { code: 'not_implemented', message: 'not_implemented:54', data: null }), 'missing');
  });

  it('a refused key is a key problem when the key was sent, and proof the route exists when it was not', () => {
    const newApi = { error: { code: '', message: '无效的令牌 (request id: 2026)', type: 'new_api_error' } };
    assert.equal(verdict('general', 401, newApi), 'key-refused');
    assert.equal(verdict('general', 401, newApi, JSON_HEADERS, false), 'serves');
    // LiteLLM without a database cannot look up any key but its master key
    const noDb = { error: { message: 'No connected db.', type: 'no_db_connection', param: null, code: '400' } };
    assert.equal(verdict('openai', 400, noDb), 'key-refused');
  });

  it('403 and 429 mean the route exists but the key is limited', () => {
    assert.equal(verdict('general', 403, { error: { message: 'quota exhausted', type: 'new_api_error' } }), 'limited');
    assert.equal(verdict('openai', 429, { error: { message: 'slow down' } }), 'limited');
  });

  it('a server error without LiteLLM in it says nothing about the route', () => {
    assert.equal(verdict('general', 502, '<html><title>502 Bad Gateway</title></html>', { 'content-type': 'text/html' }), 'trouble');
    assert.equal(verdict('general', 500, { error: { message: 'upstream error', code: '500' } }), 'trouble');
    assert.equal(verdict('openai', 503, 'Service Unavailable', { 'content-type': 'text/plain' }), 'trouble');
  });

  it('a web page or a redirect is no gateway route; a JSON 4xx is a route that read the request', () => {
    assert.equal(verdict('general', 200, '<!doctype html><title>New API</title>', { 'content-type': 'text/html' }), 'foreign');
    assert.equal(verdict('general', 302, '', { location: '/login' }), 'foreign');
    assert.equal(verdict('openai', 400, { error: { message: 'invalid video id', type: 'invalid_request_error' } }), 'serves');
  });

  it('says what the gateway said, redacted and bounded', () => {
    const reading = readRoute('general', { status: 404, text: JSON.stringify({ detail: 'Not Found' }), headers: JSON_HEADERS }, true);
    assert.equal(reading.said, 'HTTP 404: Not Found');
    const long = readRoute('general', { status: 404, text: 'x'.repeat(5000), headers: {} }, true);
    assert.ok(long.said.length < 400, `${long.said.length} characters`);
  });
});

describe('doctor: reading the Messages route probe (a request without a model)', () => {
  it('a validation error, in each gateway shape, means the route exists', () => {
    // LiteLLM, new-api, the simulator
    const litellm = {
      type: 'error',
      error: { type: 'invalid_request_error', message: "anthropic_messages: Missing required parameter: 'messages'." },
    };
    assert.equal(verdict('messages', 400, litellm), 'serves');
    assert.equal(
      verdict('messages', 400, { error: { code: '', message: '未指定模型名称，模型名称不能为空', type: 'new_api_error' } }),
      'serves',
    );
    assert.equal(
      verdict('messages', 400, { type: 'error', error: { type: 'invalid_request_error', message: 'model: Field required' } }),
      'serves',
    );
    // A distributor that looks the empty model up first
    assert.equal(verdict('messages', 503, { error: { code: 'model_not_found', message: 'no available channel for model' } }), 'serves');
    assert.equal(verdict('messages', 404, { error: { code: 'model_not_found', message: 'model  not found' } }), 'serves');
  });

  it('a 404 for the path means the address does not serve Messages', () => {
    assert.equal(verdict('messages', 404, { detail: 'Not Found' }), 'missing');
    assert.equal(
      verdict('messages', 404, { error: { message: 'Invalid URL (POST /v1/messages)', type: 'invalid_request_error' } }),
      'missing',
    );
  });
});

describe('doctor: the route probes', () => {
  it('name the header the key would go in (the route decides whether it goes), and ask LiteLLM not to forward the impossible task', () => {
    const general = routeRequest('general', 'http://gw', 'reelflow-doctor-1');
    assert.equal(general.url, 'http://gw/v1/video/generations/reelflow-doctor-1');
    assert.equal(general.method, 'GET');
    assert.equal(general.credential, 'bearer');
    assert.equal(general.headers.authorization, undefined);
    assert.equal(general.headers['custom-llm-provider'], 'reelflow-doctor-probe');
    const openai = routeRequest('openai', 'http://gw', 'reelflow-doctor-1');
    assert.equal(openai.url, 'http://gw/v1/videos/reelflow-doctor-1');
    assert.equal(openai.credential, 'bearer');
    const messages = routeRequest('messages', 'http://gw', 'reelflow-doctor-1');
    assert.equal(messages.method, 'POST');
    assert.equal(messages.credential, 'x-api-key');
    assert.equal(messages.headers['x-api-key'], undefined);
    assert.equal(messages.headers['anthropic-version'], '2023-06-01');
    // No model: no gateway can generate anything from it.
    assert.deepEqual(JSON.parse(messages.body ?? ''), {});
  });
});

describe('doctor: recognising LiteLLM', () => {
  it('by its x-litellm-* headers or its exception names; not by a FastAPI 404, new-api or the simulator', () => {
    assert.equal(litellmVersion({ headers: LITELLM_HEADERS, text: '{}' }), '1.106.2');
    assert.equal(litellmVersion({ headers: { 'x-litellm-call-id': 'c0ffee' }, text: '{}' }), '');
    assert.equal(litellmVersion({ headers: {}, text: '{"error":{"message":"litellm.BadRequestError: OpenAIException - x"}}' }), '');
    assert.equal(litellmVersion({ headers: JSON_HEADERS, text: '{"detail":"Not Found"}' }), undefined);
    assert.equal(
      litellmVersion({
        headers: { 'x-oneapi-request-id': '2026' },
        text: '{"code":"task_not_exist","message":"task_not_exist","data":null}',
      }),
      undefined,
    );
    assert.equal(litellmVersion({ headers: { 'keep-alive': 'timeout=65' }, text: '{"error":{"message":"Task not found"}}' }), undefined);
  });

  it('warns once, naming each proxy and the setting', () => {
    assert.equal(litellmWarning([]), undefined);
    const one = litellmWarning([{ base: 'http://a', version: '1.106.2' }])!;
    assert.equal(one.status, 'warn');
    assert.match(one.detail, /^http:\/\/a is a LiteLLM proxy 1\.106\.2: /);
    assert.match(one.detail, /up to three paid renders for one create/);
    assert.match(one.detail, /router_settings\.num_retries: 0/);
    const two = litellmWarning([
      { base: 'http://a', version: '1.106.2' },
      { base: 'http://b', version: '' },
    ])!;
    assert.match(two.detail, /^http:\/\/a, http:\/\/b are LiteLLM proxies \(1\.106\.2\): /);
  });
});

describe('doctor: what a job needs of its gateway', () => {
  const item = (model: string, protocol: 'general' | 'openai'): PlanItem =>
    ({ key: model, index: 1, outputName: model, request: { model, protocol, prompt: 'p', references: [] } }) as PlanItem;

  it('the protocols its items use, with their models, and Messages only with enhance:', () => {
    const needs = gatewayNeeds({
      items: [
        item('veo-3.1-fast-generate-001', 'openai'),
        item('veo-3.1-fast-generate-001', 'openai'),
        item('veo-3.1-generate-001', 'openai'),
      ],
    });
    assert.deepEqual([...needs.video.keys()], ['openai']);
    assert.deepEqual(needs.video.get('openai'), { items: 3, models: ['veo-3.1-fast-generate-001', 'veo-3.1-generate-001'] });
    assert.equal(needs.messages, false);
    const both = gatewayNeeds({
      items: [item('seedance', 'general'), item('veo-3.1-fast-generate-001', 'openai')],
      enhance: { model: 'claude', maxTokens: 10 },
    });
    assert.deepEqual([...both.video.keys()].sort(), ['general', 'openai']);
    assert.equal(both.messages, true);
  });
});
