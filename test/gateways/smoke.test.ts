// The protocol calls reelflow makes, sent directly over HTTP to the two real gateways of docs/gateways.md
// (LiteLLM and new-api v0.10.0, provisioned by scripts/litellm.sh and scripts/new-api.sh), each in
// front of the project's fake upstream. Asserts what each gateway really answers; OBSERVED.md
// beside this file records the full shapes. No reelflow code runs here: these are the facts
// reelflow's client and the simulator's gateway profiles are built against.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FAIL_CREATE_500, FAIL_RENDER, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { GATEWAY_MODELS, UPSTREAM_UNKNOWN_MODEL, startLiteLLM, startNewApi, type Gateway } from '../support/gateways';
import { geminiTaskOnGeneralRoute } from '../support/new-api-answers';

interface Answer {
  status: number;
  type: string;
  text: string;
  bytes: Buffer;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- gateway JSON, asserted field by field
  json: any;
}

async function call(
  gateway: Gateway,
  method: string,
  path: string,
  options: { form?: Record<string, string>; json?: unknown; key?: string | null; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const key = options.key === undefined ? gateway.key : options.key;
  const headers: Record<string, string> = { ...(key ? { authorization: `Bearer ${key}` } : {}), ...options.headers };
  let body: FormData | string | undefined;
  if (options.form) {
    body = new FormData();
    for (const [name, value] of Object.entries(options.form)) body.set(name, value);
  } else if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${gateway.url}${path}`, { method, headers, body, signal: AbortSignal.timeout(30_000) });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', text, bytes, json };
}

/** Calls `read` every second until `done` holds or the time runs out; returns the last answer. */
async function pollUntil(read: () => Promise<Answer>, done: (a: Answer) => boolean, timeoutMs: number): Promise<Answer> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await read();
    if (done(answer) || Date.now() > deadline) return answer;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

function messages(gateway: Gateway, model: string, key = gateway.key): Promise<Answer> {
  return call(gateway, 'POST', '/v1/messages', {
    key: null,
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    json: { model, max_tokens: 100, messages: [{ role: 'user', content: 'a lighthouse at dusk' }] },
  });
}

/** The client's key never reaches the upstream, and the file host never sees any key. */
function assertKeyStayedAtGateway(upstream: FakeUpstream, gateway: Gateway): void {
  assert.ok(upstream.requests.length > 0);
  for (const request of upstream.requests) {
    assert.ok(!JSON.stringify(request.headers).includes(gateway.key), `${request.method} ${request.path} carried the gateway key`);
    if (request.path.startsWith('/files/')) {
      assert.equal(request.headers.authorization, undefined, `${request.path} got an Authorization header`);
    }
  }
}

describe('LiteLLM proxy 1.106 in front of a fake Gemini (Veo) + OpenAI videos + Anthropic upstream', () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  before(async () => {
    upstream = await startFakeUpstream({ renderMs: 1500 });
    gateway = await startLiteLLM(upstream);
  });
  after(async () => {
    await gateway?.stop();
    await upstream?.stop();
  });

  it('creates on /v1/videos, polls to completed and serves the upstream bytes; one create upstream', async () => {
    const prompt = 'litellm: a lighthouse at dusk';
    const created = await call(gateway, 'POST', '/v1/videos', {
      form: { model: GATEWAY_MODELS.openai, prompt, seconds: '8', size: '1280x720' },
    });
    assert.equal(created.status, 200, created.text);
    assert.equal(created.json.status, 'processing');
    // The id is base64 of LiteLLM's routing data around the upstream's id: about 130 characters.
    const id = created.json.id as string;
    assert.match(id, /^video_[A-Za-z0-9+/]+=*$/);
    assert.ok(id.length > 120, `id of ${id.length} characters`);
    const decoded = Buffer.from(id.slice('video_'.length), 'base64').toString('utf8');
    // Its Gemini provider wraps the Veo operation's name.
    assert.match(
      decoded,
      /^litellm:custom_llm_provider:gemini;model_id:veo-3\.1-fast-generate-001;video_id:models\/veo-3\.1-fast-generate-001\/operations\/[0-9a-f]{12}$/,
    );

    const done = await pollUntil(
      () => call(gateway, 'GET', `/v1/videos/${id}`),
      (a) => a.json?.status !== 'processing',
      30_000,
    );
    assert.equal(done.status, 200, done.text);
    assert.equal(done.json.status, 'completed');
    assert.equal(done.json.progress, null, 'its Gemini provider reports no progress');
    // The retrieve answers another id for the same task: its model_id is empty.
    assert.notEqual(done.json.id, id);
    assert.equal(
      Buffer.from((done.json.id as string).slice('video_'.length), 'base64').toString('utf8'),
      decoded.replace('model_id:veo-3.1-fast-generate-001;', 'model_id:;'),
    );

    const content = await call(gateway, 'GET', `/v1/videos/${id}/content`, { headers: { range: 'bytes=100-' } });
    assert.equal(content.status, 200, 'Range is ignored: the whole video, status 200');
    assert.equal(content.type, 'video/mp4');
    assert.ok(content.bytes.equals(upstream.video));
    assert.equal(upstream.createsFor(prompt), 1);
    // Its Gemini provider maps seconds and size to Veo's parameters.
    const sent = upstream.requests.find((r) => r.method === 'POST' && r.body.includes(prompt));
    assert.equal(sent?.path, '/v1beta/models/veo-3.1-fast-generate-001:predictLongRunning');
    assert.deepEqual(JSON.parse(sent.body), {
      instances: [{ prompt }],
      parameters: { aspectRatio: '16:9', resolution: '720p', durationSeconds: 8 },
    });
    assert.ok(
      upstream.requests.every((r) => r.headers.range === undefined),
      'Range is not passed upstream',
    );
    assertKeyStayedAtGateway(upstream, gateway);
  });

  it('reads a failed Veo render as completed: its Gemini provider ignores the operation error; the content is then a 500', async () => {
    const created = await call(gateway, 'POST', '/v1/videos', { form: { model: GATEWAY_MODELS.openai, prompt: `litellm ${FAIL_RENDER}` } });
    const id = created.json.id as string;
    const notReady = await call(gateway, 'GET', `/v1/videos/${id}/content`);
    assert.equal(notReady.status, 500);
    assert.match(notReady.json.error.message, /Video generation is not complete yet/);
    // litellm/llms/gemini/videos/transformation.py: status is "processing" until done, then "completed".
    const failed = await pollUntil(
      () => call(gateway, 'GET', `/v1/videos/${id}`),
      (a) => a.json?.status !== 'processing',
      30_000,
    );
    assert.equal(failed.json.status, 'completed', failed.text);
    const content = await call(gateway, 'GET', `/v1/videos/${id}/content`);
    assert.equal(content.status, 500);
    assert.match(content.json.error.message, /No response data in completed operation/);
  });

  it('has no general protocol: FastAPI 404 {"detail":"Not Found"} on /v1/video/generations', async () => {
    const create = await call(gateway, 'POST', '/v1/video/generations', {
      json: { model: GATEWAY_MODELS.openai, prompt: 'x', seconds: '4' },
    });
    const retrieve = await call(gateway, 'GET', '/v1/video/generations/task_abc');
    for (const answer of [create, retrieve]) {
      assert.equal(answer.status, 404);
      assert.deepEqual(answer.json, { detail: 'Not Found' });
    }
  });

  it('error shapes: unknown model 400, upstream refusal wrapped with code "404", wrong key 400 no_db_connection, no key 500', async () => {
    const unknown = await call(gateway, 'POST', '/v1/videos', { form: { model: 'no-such-model', prompt: 'x' } });
    assert.equal(unknown.status, 400);
    assert.equal(
      unknown.json.error.message,
      '/videos: Invalid model name passed in model=no-such-model. Call `/v1/models` to view available models for your key.',
    );
    assert.equal(unknown.json.error.code, '400');

    const refused = await call(gateway, 'POST', '/v1/videos', { form: { model: UPSTREAM_UNKNOWN_MODEL, prompt: 'x' } });
    assert.equal(refused.status, 404);
    assert.equal(refused.json.error.code, '404');
    assert.match(
      refused.json.error.message,
      /^litellm\.NotFoundError: OpenAIException - \{"error":\{"message":"The model 'no-such-model' does not exist"/,
    );
    assert.match(refused.json.error.message, /model group 'upstream-unknown' failed with the error above\. No fallback was attempted\.$/);

    // Without a database LiteLLM cannot look up a key that is not the master key.
    const wrongKey = await call(gateway, 'POST', '/v1/videos', { form: { model: GATEWAY_MODELS.openai, prompt: 'x' }, key: 'sk-wrong' });
    assert.equal(wrongKey.status, 400);
    assert.deepEqual(wrongKey.json, { error: { message: 'No connected db.', type: 'no_db_connection', param: null, code: '400' } });
    // No key at all: the auth error's handler fails (it imports prisma, which litellm[proxy] does
    // not install) and Starlette answers a bare 500.
    const noKey = await call(gateway, 'GET', '/v1/models', { key: null });
    assert.equal(noKey.status, 500);
    assert.equal(noKey.text, 'Internal Server Error');
  });

  it('with router num_retries 0 sends a create that met an upstream 500 once; num_retries 2 sends it three times', async () => {
    const once = `litellm once ${FAIL_CREATE_500}`;
    const answer = await call(gateway, 'POST', '/v1/videos', { json: { model: GATEWAY_MODELS.openai, prompt: once } });
    assert.equal(answer.status, 500);
    assert.match(answer.json.error.message, /^litellm\.InternalServerError: GeminiException InternalServerError - /);
    assert.equal(upstream.createsFor(once), 1);
    // LiteLLM's default (2) as a per-request setting: three paid renders for one create.
    const thrice = `litellm thrice ${FAIL_CREATE_500}`;
    await call(gateway, 'POST', '/v1/videos', { json: { model: GATEWAY_MODELS.openai, prompt: thrice, num_retries: 2 } });
    assert.equal(upstream.createsFor(thrice), 3);
  });

  it('relays Messages with the upstream key; an unknown model is a 400 in the Anthropic error shape', async () => {
    const answer = await messages(gateway, GATEWAY_MODELS.messages);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.type, 'message');
    assert.equal(answer.json.content[0].text, 'A cinematic shot: a lighthouse at dusk');
    const unknown = await messages(gateway, 'claude-nope');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json.type, 'error');
    assert.match(unknown.json.error.message, /^anthropic_messages: Invalid model name passed in model=claude-nope\./);
    const relayed = upstream.requests.filter((r) => r.path === '/v1/messages');
    assert.ok(relayed.length > 0 && relayed.every((r) => r.headers['x-api-key'] === upstream.apiKey));
    assertKeyStayedAtGateway(upstream, gateway);
  });
});

describe('new-api v0.10.0 in front of a fake Ark tasks + Gemini (Veo) + Anthropic upstream', () => {
  const serverAddress = 'http://new-api.test:3000';
  let upstream: FakeUpstream;
  let gateway: Gateway;
  // Tasks created once and polled together: new-api refreshes tasks from the upstream every 15 s.
  let general: { prompt: string; id: string; done: Answer };
  let failing: { id: string; done: Answer };
  let openai: { prompt: string; id: string; done: Answer; general: Answer };
  before(async () => {
    upstream = await startFakeUpstream({ renderMs: 1000 });
    gateway = await startNewApi(upstream, { serverAddress });
    const finished = (a: Answer) => ['SUCCESS', 'FAILURE'].includes(a.json?.data?.status as string);
    const generalPrompt = 'new-api: a lighthouse at dusk';
    const createdGeneral = await call(gateway, 'POST', '/v1/video/generations', {
      json: { model: GATEWAY_MODELS.general, prompt: generalPrompt, seconds: '5', metadata: { resolution: '720p', ratio: '16:9' } },
    });
    assert.equal(createdGeneral.status, 200, createdGeneral.text);
    assert.deepEqual(Object.keys(createdGeneral.json as object), ['task_id'], createdGeneral.text);
    const createdFailing = await call(gateway, 'POST', '/v1/video/generations', {
      json: { model: GATEWAY_MODELS.general, prompt: `new-api ${FAIL_RENDER}`, seconds: '5' },
    });
    const openaiPrompt = 'new-api: a keeper climbing the stairs';
    const createdOpenai = await call(gateway, 'POST', '/v1/videos', {
      form: { model: GATEWAY_MODELS.openai, prompt: openaiPrompt, seconds: '8', size: '1280x720' },
    });
    assert.equal(createdOpenai.status, 200, createdOpenai.text);
    const poll = (path: string, done: (a: Answer) => boolean) => pollUntil(() => call(gateway, 'GET', path), done, 60_000);
    const ids = {
      general: createdGeneral.json.task_id as string,
      failing: createdFailing.json.task_id as string,
      openai: createdOpenai.json.id as string,
    };
    const [generalDone, failingDone, openaiDone] = await Promise.all([
      poll(`/v1/video/generations/${ids.general}`, finished),
      poll(`/v1/video/generations/${ids.failing}`, finished),
      poll(`/v1/videos/${ids.openai}`, (a) => a.json?.status === 'completed' || a.json?.status === 'failed'),
    ]);
    general = { prompt: generalPrompt, id: ids.general, done: generalDone };
    failing = { id: ids.failing, done: failingDone };
    openai = {
      prompt: openaiPrompt,
      id: ids.openai,
      done: openaiDone,
      general: await call(gateway, 'GET', `/v1/video/generations/${ids.openai}`),
    };
  });
  after(async () => {
    await gateway?.stop();
    await upstream?.stop();
  });

  it('general protocol (Seedance channel): {"task_id":"cgt-…"}; finished task has the video address in fail_reason, no result_url', async () => {
    assert.match(general.id, /^cgt-/);
    const data = general.done.json.data;
    assert.equal(data.status, 'SUCCESS', general.done.text);
    assert.equal(data.progress, '100%');
    assert.equal(data.fail_reason, `${upstream.url}/files/${general.id}.mp4`);
    assert.equal('result_url' in data, false);
    assert.equal(data.data.content.video_url, data.fail_reason, 'the upstream task is passed through in data.data');
    // Only the prompt reaches Ark: v0.10.0's Seedance adaptor drops seconds and metadata.
    const sent = upstream.requests.find((r) => r.method === 'POST' && r.body.includes(general.prompt));
    assert.deepEqual(JSON.parse(sent?.body ?? '{}'), { model: GATEWAY_MODELS.general, content: [{ type: 'text', text: general.prompt }] });
    assert.equal(upstream.createsFor(general.prompt), 1);

    const content = await call(gateway, 'GET', `/v1/videos/${general.id}/content`, { headers: { range: 'bytes=100-' } });
    assert.equal(content.status, 200, 'Range is ignored');
    assert.ok(content.bytes.equals(upstream.video));
    // The video-object route does not serve Seedance tasks: v0.10.0's Seedance adaptor has no converter.
    const wrongRoute = await call(gateway, 'GET', `/v1/videos/${general.id}`);
    assert.equal(wrongRoute.status, 501);
    assert.deepEqual(wrongRoute.json, { code: 'not_implemented', message: 'not_implemented:54', data: null });
  });

  it('a failed Seedance task says only "task failed"; the reason is in data.data.error.message', () => {
    const data = failing.done.json.data;
    assert.equal(data.status, 'FAILURE', failing.done.text);
    assert.equal(data.fail_reason, 'task failed');
    assert.equal(data.data.error.message, 'The render was blocked by the upstream');
  });

  it('openai protocol (Gemini channel, Veo): plain video object; the general retrieve answers status succeeded and url {ServerAddress}/v1/videos/{id}/content', async () => {
    assert.equal(openai.done.status, 200, openai.done.text);
    assert.equal(openai.done.json.status, 'completed');
    assert.equal(openai.done.json.id, openai.id);
    // A Gemini task read on the general route answers its own shape (relay/relay_task.go), not the task DTO.
    assert.deepEqual(openai.general.json, geminiTaskOnGeneralRoute(openai.id, `${serverAddress}/v1/videos/${openai.id}/content`));

    const content = await call(gateway, 'GET', `/v1/videos/${openai.id}/content`);
    assert.equal(content.status, 200);
    assert.equal(content.type, 'video/mp4');
    assert.ok(content.bytes.equals(upstream.video));
    const noKey = await call(gateway, 'GET', `/v1/videos/${openai.id}/content`, { key: null });
    assert.equal(noKey.status, 401);
    assert.equal(noKey.json.error.type, 'new_api_error');
    assert.equal(upstream.createsFor(openai.prompt), 1);
    // v0.10.0's Gemini adaptor sends Veo only the prompt and the request's metadata: seconds and size are dropped.
    const sent = upstream.requests.find((r) => r.method === 'POST' && r.body.includes(openai.prompt));
    assert.equal(sent?.path, '/v1beta/models/veo-3.1-fast-generate-001:predictLongRunning');
    assert.deepEqual(JSON.parse(sent.body), { instances: [{ prompt: openai.prompt }], parameters: {} });
    assertKeyStayedAtGateway(upstream, gateway);
  });

  it('error shapes: unknown model 503 model_not_found, wrong key 401, unknown task 400 task_not_exist, missing route 404', async () => {
    const unknown = await call(gateway, 'POST', '/v1/video/generations', { json: { model: 'no-such-model', prompt: 'x', seconds: '5' } });
    assert.equal(unknown.status, 503);
    assert.equal(unknown.json.error.code, 'model_not_found');
    assert.match(unknown.json.error.message, /^分组 default 下模型 no-such-model 无可用渠道（distributor） \(request id: \w+\)$/);

    const wrongKey = await call(gateway, 'POST', '/v1/video/generations', {
      json: { model: GATEWAY_MODELS.general, prompt: 'x', seconds: '5' },
      key: 'sk-wrongwrongwrong',
    });
    assert.equal(wrongKey.status, 401);
    assert.match(wrongKey.json.error.message, /^无效的令牌 \(request id: \w+\)$/);

    const noTask = await call(gateway, 'GET', '/v1/video/generations/task_doesnotexist');
    assert.equal(noTask.status, 400);
    assert.deepEqual(noTask.json, { code: 'task_not_exist', message: 'task_not_exist', data: null });
    const noContent = await call(gateway, 'GET', '/v1/videos/task_doesnotexist/content');
    assert.equal(noContent.status, 404);
    assert.deepEqual(noContent.json, { error: { message: 'Task not found', type: 'invalid_request_error' } });

    const missing = await call(gateway, 'GET', '/v1/video/nothing');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json, {
      error: { message: 'Invalid URL (GET /v1/video/nothing)', type: 'invalid_request_error', param: '', code: '' },
    });

    const numberSeconds = await call(gateway, 'POST', '/v1/video/generations', {
      json: { model: GATEWAY_MODELS.general, prompt: 'x', seconds: 5 },
    });
    assert.equal(numberSeconds.status, 400);
    assert.equal(numberSeconds.json.code, 'invalid_request');
  });

  it('relays Messages through the Anthropic channel with the upstream key', async () => {
    const answer = await messages(gateway, GATEWAY_MODELS.messages);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.content[0].text, 'A cinematic shot: a lighthouse at dusk');
    const wrongKey = await messages(gateway, GATEWAY_MODELS.messages, 'sk-wrongwrongwrong');
    assert.equal(wrongKey.status, 401);
    const relayed = upstream.requests.filter((r) => r.path === '/v1/messages');
    assert.ok(relayed.length > 0 && relayed.every((r) => r.headers['x-api-key'] === upstream.apiKey));
    assertKeyStayedAtGateway(upstream, gateway);
  });
});
