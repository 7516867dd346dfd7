// The estimate of a plan (docs/costs.md): sums per model, assumed lengths, unpriced items counted and
// their models named, and the lines `validate` and `run --dry-run` print.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateLines, estimatePlan, formatUsd } from '../../../client/estimate';
import type { PlanItem, RenderRequest } from '../../../jobfile/plan';
import type { PriceTable } from '../../../jobfile/prices';

function item(index: number, request: Partial<RenderRequest>): PlanItem {
  return {
    key: `k${index}`,
    index,
    outputName: `o${index}`,
    request: { model: 'm', protocol: 'general', prompt: 'x'.repeat(30), references: [], ...request },
  };
}

const TABLE: PriceTable = {
  'veo-3.1-fast-generate-001': { source: 'job file', perSecond: 0.1 },
  seedance: { source: 'p.json (seedance)', perVideo: 0.5 },
  claude: { source: 'job file', perMillionInputTokens: 3, perMillionOutputTokens: 15 },
};

describe('estimatePlan', () => {
  it('sums per model and in total; an item without seconds is priced at the assumed length and counted', () => {
    const e = estimatePlan({
      pricing: TABLE,
      items: [
        item(1, { model: 'veo-3.1-fast-generate-001', protocol: 'openai', seconds: '8' }),
        item(2, { model: 'veo-3.1-fast-generate-001', protocol: 'openai' }),
        item(3, { model: 'seedance' }),
        item(4, { model: 'kling' }),
        item(5, { model: 'kling' }),
      ],
    });
    assert.equal(e.total, 1.7);
    assert.deepEqual(
      e.per_model.map((r) => [r.model, r.items, r.priced_items, r.usd, r.source, r.assumed_seconds]),
      [
        ['veo-3.1-fast-generate-001', 2, 2, 1.2, 'job file', { 4: 1 }],
        ['seedance', 1, 1, 0.5, 'p.json (seedance)', {}],
        ['kling', 2, 0, 0, null, {}],
      ],
    );
    assert.equal(e.unpriced_items, 2);
    assert.deepEqual(e.unpriced_models, [{ model: 'kling', items: 2, reason: 'no price for kling' }]);
  });

  it('rewrites are priced per token after the creates; an item with an unpriced rewrite is unpriced', () => {
    const priced = estimatePlan({ pricing: TABLE, enhance: { model: 'claude', maxTokens: 100 }, items: [item(1, { model: 'seedance' })] });
    // 10 input tokens at $3/M, 100 output tokens at $15/M.
    assert.deepEqual(
      priced.per_model.map((r) => [r.model, r.role, r.usd]),
      [
        ['seedance', 'video', 0.5],
        ['claude', 'enhance', 0.00153],
      ],
    );
    assert.equal(priced.unpriced_items, 0);
    const unpriced = estimatePlan({ pricing: TABLE, enhance: { model: 'haiku', maxTokens: 100 }, items: [item(1, { model: 'seedance' })] });
    assert.equal(unpriced.total, 0.5);
    assert.equal(unpriced.unpriced_items, 1);
    assert.deepEqual(unpriced.unpriced_models, [{ model: 'haiku', items: 1, reason: 'no price for haiku' }]);
  });
});

describe('estimateLines', () => {
  it('one line per model, the assumption, the unpriced model named, the budget', () => {
    const e = estimatePlan({
      pricing: TABLE,
      items: [item(1, { model: 'veo-3.1-fast-generate-001', protocol: 'openai' }), item(2, { model: 'kling' })],
    });
    assert.deepEqual(estimateLines(e, { maxUsd: 0.3 }), [
      'estimate: $0.40 (USD) for 1 of 2 items; 1 without a price, not counted',
      '  $0.40  veo-3.1-fast-generate-001: 1 item, price from job file',
      '           1 item without seconds, assumed 4 s (an assumption: set seconds)',
      '      -  kling: 1 item',
      '  no price: kling (1 item): no price for kling; add it to pricing in the job file or a prices file',
      'budget:   $0.30; the estimate is above it',
    ]);
  });

  it('a job without any price: one line naming its models', () => {
    assert.deepEqual(estimateLines(estimatePlan({ items: [item(1, {}), item(2, {})] })), [
      'estimate: none, no prices for m (2 items); add pricing to the job file, or pricing_file / --prices (docs/costs.md)',
    ]);
  });

  it('amounts under a cent keep two significant digits', () => {
    assert.deepEqual([formatUsd(0), formatUsd(0.00153), formatUsd(0.02), formatUsd(12.345)], ['$0.00', '$0.0015', '$0.02', '$12.35']);
  });
});
