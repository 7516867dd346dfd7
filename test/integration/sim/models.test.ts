// GET /v1/models on every profile, over real HTTP: the key's catalog in the OpenAI list shape, in
// each gateway's own form (test/gateways/OBSERVED.md), and the key required as on every route.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AUTH, withSim } from './helpers';

type Listed = { object?: string; success?: boolean; data?: Array<Record<string, unknown>> };

async function list(base: string, headers: Record<string, string>) {
  const r = await fetch(`${base}/v1/models`, { headers });
  return { status: r.status, body: (await r.json()) as Listed & { error?: { message?: string } } };
}

describe('GET /v1/models', () => {
  it('default profile: the configured models, OpenAI list shape, key required; counted in the stats', async () => {
    await withSim({ models: ['seedance-1-0-pro-250528', 'veo-3.1-fast-generate-001'] }, async (sim) => {
      const base = sim.urls[0]!;
      const r = await list(base, AUTH);
      assert.equal(r.status, 200);
      assert.equal(r.body.object, 'list');
      assert.deepEqual(
        r.body.data?.map((m) => [m['id'], m['object']]),
        [
          ['seedance-1-0-pro-250528', 'model'],
          ['veo-3.1-fast-generate-001', 'model'],
        ],
      );
      const none = await list(base, {});
      assert.equal(none.status, 401);
      assert.equal(sim.stats().requests['GET /v1/models'], 2);
      assert.equal(sim.stats().tasksCreated, 0);
    });
  });

  for (const profile of ['new-api', 'new-api-0.10'] as const) {
    it(`${profile}: sorted by id, owned_by and supported_endpoint_types, success: true; 401 in its words without a key`, async () => {
      await withSim({ profile, models: ['veo-3.1-fast-generate-001', 'seedance-1-0-pro-250528', 'claude-sonnet-4-6'] }, async (sim) => {
        const base = sim.urls[0]!;
        const r = await list(base, AUTH);
        assert.equal(r.status, 200);
        assert.equal(r.body.success, true);
        assert.equal(r.body.object, 'list');
        assert.deepEqual(r.body.data, [
          { id: 'claude-sonnet-4-6', object: 'model', created: 1626777600, owned_by: 'custom', supported_endpoint_types: [] },
          { id: 'seedance-1-0-pro-250528', object: 'model', created: 1626777600, owned_by: 'volcengine', supported_endpoint_types: [] },
          { id: 'veo-3.1-fast-generate-001', object: 'model', created: 1626777600, owned_by: 'custom', supported_endpoint_types: [] },
        ]);
        const none = await list(base, {});
        assert.equal(none.status, 401);
        assert.match(none.body.error?.message ?? '', /^未提供令牌 \(request id: /);
        const wrong = await list(base, { authorization: 'Bearer sk-wrong-0000000000' });
        assert.match(wrong.body.error?.message ?? '', /^无效的令牌 \(request id: /);
      });
    });
  }
});

describe('GET /api/pricing (publishedPrices)', () => {
  it("new-api's public price list in its v0.10.0 shape when given prices, no key needed; no such route without", async () => {
    await withSim({ publishedPrices: { 'veo-3.1-fast-generate-001': 0.1, 'kling-v2-1': 0.5 } }, async (sim) => {
      const r = await fetch(`${sim.urls[0]!}/api/pricing`);
      assert.equal(r.status, 200);
      const body = (await r.json()) as { success: boolean; group_ratio: unknown; data: Array<Record<string, unknown>> };
      assert.equal(body.success, true);
      assert.deepEqual(body.group_ratio, { default: 1 });
      assert.deepEqual(
        body.data.map((e) => [e['model_name'], e['quota_type'], e['model_price'], e['supported_endpoint_types']]),
        [
          // Veo's Gemini channel lists the gemini and openai endpoints: priced per call, as new-api bills it.
          ['veo-3.1-fast-generate-001', 1, 0.1, ['gemini', 'openai']],
          ['kling-v2-1', 1, 0.5, ['openai']],
        ],
      );
      assert.equal(sim.stats().requests['GET /api/pricing'], 1);
    });
    await withSim({ profile: 'new-api' }, async (sim) => {
      const r = await fetch(`${sim.urls[0]!}/api/pricing`);
      assert.equal(r.status, 404);
      await r.arrayBuffer();
    });
  });
});
