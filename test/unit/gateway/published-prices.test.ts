// Reading the prices a gateway publishes (gateway/published-prices.ts) from answers shaped as
// LiteLLM 1.106.2 and new-api v0.10.0 give them (test/gateways/OBSERVED.md, "Published prices"),
// and what an answer that is not to be believed turns into. Pure parsing; the real gateways are in
// test/gateways/gateway-prices.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromLiteLLM, fromNewApi } from '../../../gateway/published-prices';
import { estimateEnhanceUsd, estimateItemUsd } from '../../../jobfile/prices';

/** The USD of a priced estimate (fails on an unpriced one). */
function usdOf(estimate: ReturnType<typeof estimateItemUsd>): number {
  assert.ok('usd' in estimate, JSON.stringify(estimate));
  return estimate.usd;
}

const models = new Set(['veo-3.1-fast-generate-001', 'seedance-1-0-pro-250528', 'claude-sonnet-4-6', 'veo', 'openai-video-model']);

function priced(reading: ReturnType<typeof fromLiteLLM>) {
  assert.ok(reading && reading.kind === 'prices');
  return reading;
}

describe('LiteLLM /v1/model/info', () => {
  const answer = {
    data: [
      {
        model_name: 'veo-3.1-fast-generate-001',
        model_info: { key: 'gemini/veo-3.1-fast-generate-001', output_cost_per_video_per_second: 0.1, output_cost_per_second: null },
      },
      { model_name: 'veo', model_info: { key: 'vertex_ai/veo', output_cost_per_second: 0.4, output_cost_per_second_4k: 0.6 } },
      { model_name: 'claude-sonnet-4-6', model_info: { input_cost_per_token: 3e-6, output_cost_per_token: 1.5e-5 } },
      { model_name: 'not-used', model_info: { output_cost_per_second: 9 } },
    ],
  };

  it('reads each used deployment like a prices file entry, named by the cost map key', () => {
    const r = priced(fromLiteLLM(answer, models, 'gateway http://g (/v1/model/info'));
    assert.deepEqual(r.prices['veo-3.1-fast-generate-001'], {
      source: 'gateway http://g (/v1/model/info, gemini/veo-3.1-fast-generate-001)',
      perSecond: 0.1,
    });
    assert.deepEqual(estimateItemUsd(r.prices, { model: 'veo', protocol: 'general', seconds: '8', resolution: '4k' }), {
      usd: 4.8,
      source: 'gateway http://g (/v1/model/info, vertex_ai/veo)',
    });
    assert.deepEqual(estimateEnhanceUsd(r.prices, { model: 'claude-sonnet-4-6', maxTokens: 100 }, 'abc'), {
      usd: 0.001503,
      source: 'gateway http://g (/v1/model/info, claude-sonnet-4-6)',
    });
    assert.equal(r.prices['not-used'], undefined, 'only the models the job uses are kept');
  });

  it('a listed model with no price, or a price that is not a number, stays unpriced with why', () => {
    const r = priced(
      fromLiteLLM(
        {
          data: [
            { model_name: 'veo-3.1-fast-generate-001', model_info: { output_cost_per_video_per_second: null } },
            { model_name: 'veo', model_info: { output_cost_per_second: -1 } },
            { model_name: 'claude-sonnet-4-6', model_info: { output_cost_per_second: '0.1' } },
          ],
        },
        models,
        'gateway http://g (/v1/model/info',
      ),
    );
    assert.deepEqual(r.prices, {});
    assert.equal(r.unpriced['veo-3.1-fast-generate-001'], 'the gateway lists veo-3.1-fast-generate-001 without a price');
    assert.match(r.unpriced.veo!, /not a number 0 or more \(output_cost_per_second\)/);
    assert.match(r.unpriced['claude-sonnet-4-6']!, /not a number 0 or more/);
  });

  it('an answer of another shape is not LiteLLM', () => {
    assert.equal(fromLiteLLM({ object: 'list', data: [{ id: 'veo-3.1-fast-generate-001' }] }, models, 'x'), undefined);
    assert.equal(fromLiteLLM('<html>', models, 'x'), undefined);
    assert.equal(fromLiteLLM(null, models, 'x'), undefined);
  });

  it('a cost map key from the gateway is shown redacted, and only when it is a plain name', () => {
    const r = priced(
      fromLiteLLM(
        { data: [{ model_name: 'veo-3.1-fast-generate-001', model_info: { key: 'sk-abcdefghijklmnop', output_cost_per_second: 0.1 } }] },
        models,
        'gateway http://g (/v1/model/info',
      ),
    );
    assert.equal(r.prices['veo-3.1-fast-generate-001']!.source, 'gateway http://g (/v1/model/info, [REDACTED])');
    const escaped = priced(
      fromLiteLLM(
        { data: [{ model_name: 'veo-3.1-fast-generate-001', model_info: { key: 'openai/\u001b[2Jsora', output_cost_per_second: 0.1 } }] },
        models,
        'gateway http://g (/v1/model/info',
      ),
    );
    assert.equal(
      escaped.prices['veo-3.1-fast-generate-001']!.source,
      'gateway http://g (/v1/model/info, veo-3.1-fast-generate-001)',
      'a key with an escape is not shown',
    );
  });
});

describe('new-api /api/pricing', () => {
  const entry = (model: string, more: Record<string, unknown>) => ({
    model_name: model,
    quota_type: 1,
    model_ratio: 0,
    model_price: 0.01,
    completion_ratio: 0,
    enable_groups: ['default'],
    ...more,
  });
  const answer = (data: unknown[], groupRatio: Record<string, unknown> = { default: 1 }) => ({
    success: true,
    data,
    group_ratio: groupRatio,
  });

  it('per second for a model of its OpenAI-video channel (type 55), ×1.666667 at the large sizes; per video for the other task models (Veo on its Gemini channel); per call for Messages', () => {
    const r = priced(
      fromNewApi(
        answer([
          // A model of a Sora-type channel (55): its OpenAI-video endpoint is billed per second.
          entry('openai-video-model', { supported_endpoint_types: ['openai-video'] }),
          entry('veo-3.1-fast-generate-001', { supported_endpoint_types: ['gemini', 'openai'] }),
          entry('seedance-1-0-pro-250528', { supported_endpoint_types: ['openai'] }),
          entry('claude-sonnet-4-6', { supported_endpoint_types: ['anthropic', 'openai'] }),
        ]),
        models,
        'gateway http://n (/api/pricing)',
      ),
    );
    const t = r.prices;
    assert.equal(usdOf(estimateItemUsd(t, { model: 'openai-video-model', protocol: 'openai', seconds: '8', size: '1280x720' })), 0.08);
    assert.equal(usdOf(estimateItemUsd(t, { model: 'openai-video-model', protocol: 'openai', seconds: '4', size: '1792x1024' })), 0.066667);
    assert.deepEqual(estimateItemUsd(t, { model: 'openai-video-model', protocol: 'openai' }), {
      usd: 0.04,
      source: 'gateway http://n (/api/pricing)',
      assumedSeconds: 4,
    });
    assert.equal(usdOf(estimateItemUsd(t, { model: 'seedance-1-0-pro-250528', protocol: 'general', seconds: '10' })), 0.01);
    // The Gemini channel charges its price per call whatever the length (relay/relay_task.go).
    assert.equal(usdOf(estimateItemUsd(t, { model: 'veo-3.1-fast-generate-001', protocol: 'openai', seconds: '8' })), 0.01);
    assert.equal(usdOf(estimateEnhanceUsd(t, { model: 'claude-sonnet-4-6', maxTokens: 1000 }, 'a prompt')), 0.01);
  });

  it('per token (quota_type 0): ratio 1 is $2 per million input tokens, completion_ratio for output; times the default group ratio', () => {
    const r = priced(
      fromNewApi(
        answer([entry('claude-sonnet-4-6', { quota_type: 0, model_ratio: 1.5, completion_ratio: 5 })], { default: 2, vip: 1 }),
        models,
        'gateway http://n (/api/pricing)',
      ),
    );
    assert.deepEqual(r.prices['claude-sonnet-4-6'], {
      source: 'gateway http://n (/api/pricing, × group ratio 2)',
      perMillionInputTokens: 6,
      perMillionOutputTokens: 30,
    });
  });

  it('a price that is not to be believed, or a pricing kind it does not read, leaves the model unpriced with why', () => {
    const r = priced(
      fromNewApi(
        answer([
          entry('veo-3.1-fast-generate-001', { model_price: 'free' }),
          entry('veo', { model_price: 1e9 }),
          entry('seedance-1-0-pro-250528', { quota_type: 7 }),
        ]),
        models,
        's',
      ),
    );
    assert.deepEqual(r.prices, {});
    assert.match(r.unpriced['veo-3.1-fast-generate-001']!, /not a number 0 or more/);
    assert.match(r.unpriced.veo!, /not a number 0 or more/);
    assert.match(r.unpriced['seedance-1-0-pro-250528']!, /quota_type 7/);
  });

  it('an answer without success: true and a data list is not new-api pricing', () => {
    assert.equal(fromNewApi({ success: false, message: 'no' }, models, 's'), undefined);
    assert.equal(fromNewApi({ data: [] }, models, 's'), undefined);
  });
});
