// Where the real gateways publish their prices (issue 24), asserted against LiteLLM 1.106.2 and
// new-api v0.10.0 in front of the fake upstream: the facts a later `doctor`/`run` reads, recorded in
// OBSERVED.md ("Published prices"). No reelflow code runs here.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { GATEWAY_MODELS, startLiteLLM, startNewApi, type Gateway } from '../support/gateways';

interface Entry {
  model_name: string;
  litellm_params: { model: string };
  model_info: Record<string, unknown>;
}

async function getJson(url: string, key?: string): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {}, signal: AbortSignal.timeout(30_000) });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

describe('published prices: LiteLLM 1.106.2 /v1/model/info', () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gateway = await startLiteLLM(upstream);
  });
  after(async () => {
    await gateway?.stop();
    await upstream?.stop();
  });

  it('lists every deployment with model_info in the model cost map shape (its bundled prices)', async () => {
    for (const path of ['/v1/model/info', '/model/info']) {
      const answer = await getJson(`${gateway.url}${path}`, gateway.key);
      assert.equal(answer.status, 200, answer.text);
      assert.match(answer.type, /application\/json/);
      const doc = JSON.parse(answer.text) as { data: Entry[] };
      assert.deepEqual(Object.keys(doc), ['data']);
      const sora = doc.data.find((e) => e.model_name === GATEWAY_MODELS.openai);
      assert.ok(sora, answer.text.slice(0, 500));
      assert.equal(sora.litellm_params.model, 'openai/sora-2');
      // The cost map's key for the deployment, its mode, and the video price: per second, any size.
      assert.equal(sora.model_info.key, 'openai/sora-2');
      assert.equal(sora.model_info.mode, 'video_generation');
      assert.equal(sora.model_info.output_cost_per_video_per_second, 0.1);
      // Every price key is present, null when the map has no value.
      for (const k of [
        'output_cost_per_second',
        'output_cost_per_second_720p',
        'output_cost_per_second_1080p',
        'output_cost_per_second_4k',
      ])
        assert.equal(sora.model_info[k], null, k);
      const claude = doc.data.find((e) => e.model_name === GATEWAY_MODELS.messages);
      assert.equal(claude?.model_info.input_cost_per_token, 3e-6);
      assert.equal(claude?.model_info.output_cost_per_token, 1.5e-5);
    }
  });

  it('?model= does not filter; an unknown litellm_model_id is a 400; no key is a 500', async () => {
    const filtered = JSON.parse((await getJson(`${gateway.url}/v1/model/info?model=sora-2`, gateway.key)).text) as { data: Entry[] };
    assert.ok(filtered.data.length > 1);
    const unknown = await getJson(`${gateway.url}/v1/model/info?litellm_model_id=x`, gateway.key);
    assert.equal(unknown.status, 400);
    assert.deepEqual(JSON.parse(unknown.text), { detail: { error: 'Model id = x not found on litellm proxy' } });
    const noKey = await getJson(`${gateway.url}/v1/model/info`);
    assert.equal(noKey.status, 500);
    assert.equal(noKey.text, 'Internal Server Error');
  });
});

describe('published prices: new-api v0.10.0 /api/pricing', () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gateway = await startNewApi(upstream);
  });
  after(async () => {
    await gateway?.stop();
    await upstream?.stop();
  });

  it('answers without a key: per-call prices (quota_type 1) in USD, group ratios; the quota unit in /api/status', async () => {
    for (const key of [undefined, gateway.key]) {
      const answer = await getJson(`${gateway.url}/api/pricing`, key);
      assert.equal(answer.status, 200);
      const doc = JSON.parse(answer.text) as {
        success: boolean;
        data: Array<Record<string, unknown>>;
        group_ratio: Record<string, number>;
      };
      assert.equal(doc.success, true);
      assert.deepEqual(Object.keys(doc).sort(), [
        'auto_groups',
        'data',
        'group_ratio',
        'success',
        'supported_endpoint',
        'usable_group',
        'vendors',
      ]);
      // test/support/gateways.ts sets ModelPrice 0.01 for each model: a per-call price.
      const sora = doc.data.find((m) => m.model_name === GATEWAY_MODELS.openai);
      assert.deepEqual(
        { ...sora },
        {
          model_name: 'sora-2',
          quota_type: 1,
          model_ratio: 0,
          model_price: 0.01,
          owner_by: '',
          completion_ratio: 0,
          enable_groups: ['default'],
          supported_endpoint_types: ['openai-video'],
        },
      );
      const seedance = doc.data.find((m) => m.model_name === GATEWAY_MODELS.general);
      assert.deepEqual([seedance?.quota_type, seedance?.model_price, seedance?.supported_endpoint_types], [1, 0.01, ['openai']]);
      assert.equal(doc.group_ratio.default, 1);
    }
    const status = JSON.parse((await getJson(`${gateway.url}/api/status`)).text) as { data: Record<string, unknown> };
    assert.deepEqual([status.data.quota_per_unit, status.data.quota_display_type, status.data.version], [500000, 'USD', 'v0.10.0']);
  });
});
