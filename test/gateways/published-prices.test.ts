// Where the real gateways publish their prices (docs/costs.md), asserted against LiteLLM 1.106.2 and
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
      const veo = doc.data.find((e) => e.model_name === GATEWAY_MODELS.openai);
      assert.ok(veo, answer.text.slice(0, 500));
      assert.equal(veo.litellm_params.model, 'gemini/veo-3.1-fast-generate-001');
      // The cost map's key for the deployment, its mode, and the video price: per second, more at 1080p and 4k.
      assert.equal(veo.model_info.key, 'gemini/veo-3.1-fast-generate-001');
      assert.equal(veo.model_info.mode, 'video_generation');
      assert.equal(veo.model_info.output_cost_per_second, 0.1);
      assert.equal(veo.model_info.output_cost_per_second_1080p, 0.12);
      assert.equal(veo.model_info.output_cost_per_second_4k, 0.3);
      // Every price key is present, null when the map has no value.
      for (const k of ['output_cost_per_video_per_second', 'output_cost_per_second_720p']) assert.equal(veo.model_info[k], null, k);
      const claude = doc.data.find((e) => e.model_name === GATEWAY_MODELS.messages);
      assert.equal(claude?.model_info.input_cost_per_token, 3e-6);
      assert.equal(claude?.model_info.output_cost_per_token, 1.5e-5);
    }
  });

  it('?model= does not filter; an unknown litellm_model_id is a 400; no key is a 500', async () => {
    const filtered = JSON.parse((await getJson(`${gateway.url}/v1/model/info?model=veo-3.1-fast-generate-001`, gateway.key)).text) as {
      data: Entry[];
    };
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
      // test/support/gateways.ts sets ModelPrice 0.01 for each model: a per-call price. The Veo
      // model's Gemini channel lists the gemini and openai endpoints (common/endpoint_type.go).
      const veo = doc.data.find((m) => m.model_name === GATEWAY_MODELS.openai);
      assert.deepEqual(
        { ...veo },
        {
          model_name: 'veo-3.1-fast-generate-001',
          quota_type: 1,
          model_ratio: 0,
          model_price: 0.01,
          owner_by: '',
          completion_ratio: 0,
          enable_groups: ['default'],
          supported_endpoint_types: ['gemini', 'openai'],
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
