// The arithmetic of prices (docs/costs.md, "How an item is priced"): per second, by resolution, per video, per token; lengths
// assumed when a request sets none; a model without a price is named, never free.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  estimateEnhanceUsd,
  estimateItemUsd,
  resolutionLabel,
  resolutionOf,
  resolutionOfSize,
  rewriteCostUsd,
  rewritePriceOf,
  type PriceTable,
} from '../../../jobfile/prices';
import { roundUsd } from '../../../domain/money';

const TABLE: PriceTable = {
  'veo-3.1-fast-generate-001': { source: 'job file', perSecond: 0.1 },
  'veo-3.1-generate-001': { source: 'job file', perSecondByResolution: { '720p': 0.3, '1024p': 0.5 } },
  'veo-3': { source: 'prices.json (vertex_ai/veo-3)', perSecond: 0.4, perSecondByResolution: { '2160p': 0.6 } },
  'seedance-1-0-pro-250528': { source: 'job file', perVideo: 0.5 },
  'wan-2': { source: 'job file', perSecond: 0.05, defaultSeconds: 10 },
  'claude-sonnet-4-6': { source: 'job file', perMillionInputTokens: 3, perMillionOutputTokens: 15 },
};

describe('resolutions', () => {
  it('labels: <lines>p in lower case; 2k is 1440p and 4k 2160p; anything else is not a resolution', () => {
    assert.equal(resolutionLabel('720p'), '720p');
    assert.equal(resolutionLabel('1080P'), '1080p');
    assert.equal(resolutionLabel('4k'), '2160p');
    assert.equal(resolutionLabel('2K'), '1440p');
    for (const bad of ['hd', '1080', '1280x720', 'p', '0p', '']) assert.equal(resolutionLabel(bad), undefined, bad);
  });

  it('an openai size is its shorter side', () => {
    assert.equal(resolutionOfSize('1280x720'), '720p');
    assert.equal(resolutionOfSize('720x1280'), '720p');
    assert.equal(resolutionOfSize('1792x1024'), '1024p');
    assert.equal(resolutionOfSize('1024x1792'), '1024p');
    assert.equal(resolutionOfSize('1920x1080'), '1080p');
    assert.equal(resolutionOfSize('720p'), undefined);
  });

  it('a request says its resolution by its protocol: general resolution, openai size', () => {
    assert.equal(resolutionOf({ protocol: 'general', resolution: '1080p', size: '1280x720' }), '1080p');
    assert.equal(resolutionOf({ protocol: 'openai', resolution: '1080p', size: '1280x720' }), '720p');
    assert.equal(resolutionOf({ protocol: 'openai' }), undefined);
  });
});

describe('estimateItemUsd', () => {
  it('per second times the seconds asked for', () => {
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'veo-3.1-fast-generate-001', protocol: 'openai', seconds: '8' }), {
      usd: 0.8,
      source: 'job file',
    });
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'veo-3.1-fast-generate-001', protocol: 'openai', seconds: '12' }), {
      usd: 1.2,
      source: 'job file',
    });
  });

  it("without seconds: the model's default if its price names one, else the protocol's, reported as assumed", () => {
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'veo-3.1-fast-generate-001', protocol: 'openai' }), {
      usd: 0.4,
      source: 'job file',
      assumedSeconds: 4,
    });
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'veo-3.1-fast-generate-001', protocol: 'general' }), {
      usd: 0.5,
      source: 'job file',
      assumedSeconds: 5,
    });
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'wan-2', protocol: 'general' }), { usd: 0.5, source: 'job file', assumedSeconds: 10 });
  });

  it('by resolution: the general resolution, or the openai size mapped to its shorter side', () => {
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'veo-3.1-generate-001', protocol: 'openai', seconds: '4', size: '720x1280' }), {
      usd: 1.2,
      source: 'job file',
    });
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'veo-3.1-generate-001', protocol: 'openai', seconds: '4', size: '1792x1024' }), {
      usd: 2,
      source: 'job file',
    });
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'veo-3', protocol: 'general', seconds: '8', resolution: '2160p' }), {
      usd: 4.8,
      source: 'prices.json (vertex_ai/veo-3)',
    });
  });

  it('a resolution the map lacks falls back to the plain per-second price (as LiteLLM does)', () => {
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'veo-3', protocol: 'general', seconds: '8', resolution: '720p' }), {
      usd: 3.2,
      source: 'prices.json (vertex_ai/veo-3)',
    });
  });

  it('by resolution, without a fallback: an unknown or missing resolution is unpriced, with why', () => {
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'veo-3.1-generate-001', protocol: 'openai', seconds: '4', size: '1920x1080' }), {
      unpriced: 'veo-3.1-generate-001 has no price for 1080p (priced: 720p, 1024p)',
    });
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'veo-3.1-generate-001', protocol: 'openai', seconds: '4' }), {
      unpriced: 'veo-3.1-generate-001 is priced by resolution (720p, 1024p) and the item sets none (size)',
    });
  });

  it('per video: the length does not matter', () => {
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'seedance-1-0-pro-250528', protocol: 'general', seconds: '10' }), {
      usd: 0.5,
      source: 'job file',
    });
  });

  it('a model without a price is named, never free', () => {
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'kling-2', protocol: 'general', seconds: '5' }), { unpriced: 'no price for kling-2' });
    assert.deepEqual(estimateItemUsd({}, { model: 'toString', protocol: 'general' }), { unpriced: 'no price for toString' });
    assert.deepEqual(estimateItemUsd(TABLE, { model: 'claude-sonnet-4-6', protocol: 'general' }), {
      unpriced: 'claude-sonnet-4-6 has no per-video or per-second price',
    });
  });

  it('sums stay exact to a millionth of a dollar', () => {
    assert.equal(roundUsd(0.1 * 3), 0.3);
    assert.deepEqual(estimateItemUsd({ m: { source: 's', perSecond: 0.07 } }, { model: 'm', protocol: 'general', seconds: '3' }), {
      usd: 0.21,
      source: 's',
    });
  });
});

describe('estimateEnhanceUsd', () => {
  it('input tokens from the text (one per 3 bytes, rounded up), output at max_tokens', () => {
    const prompt = 'x'.repeat(300);
    // 100 input tokens at $3/M + 400 output tokens at $15/M.
    assert.deepEqual(estimateEnhanceUsd(TABLE, { model: 'claude-sonnet-4-6', maxTokens: 400 }, prompt), {
      usd: 0.0063,
      source: 'job file',
    });
    // The system text is sent with every rewrite.
    assert.deepEqual(estimateEnhanceUsd(TABLE, { model: 'claude-sonnet-4-6', maxTokens: 400, system: 'y'.repeat(300) }, prompt), {
      usd: 0.0066,
      source: 'job file',
    });
  });

  it('a model without token prices is named', () => {
    assert.deepEqual(estimateEnhanceUsd(TABLE, { model: 'veo-3.1-fast-generate-001', maxTokens: 400 }, 'p'), {
      unpriced: 'veo-3.1-fast-generate-001 rewrites prompts (enhance) but has no per-token prices',
    });
    assert.deepEqual(estimateEnhanceUsd(TABLE, { model: 'gpt-x', maxTokens: 400 }, 'p'), { unpriced: 'no price for gpt-x' });
  });
});

describe('rewriteCostUsd: what an answered rewrite cost, from its usage', () => {
  const enhance = { model: 'claude-sonnet-4-6', maxTokens: 400 };
  const prompt = 'x'.repeat(300);
  const price = rewritePriceOf(TABLE, 'claude-sonnet-4-6');

  it('the price a page hands the enhance activity: the token or per-call prices, nothing of a video model', () => {
    assert.deepEqual(price, { perMillionInputTokens: 3, perMillionOutputTokens: 15 });
    assert.deepEqual(rewritePriceOf({ m: { source: 'gateway', perCall: 0.01 } }, 'm'), { perCall: 0.01 });
    assert.equal(rewritePriceOf(TABLE, 'veo-3.1-fast-generate-001'), undefined, 'no token or call price');
    assert.equal(rewritePriceOf(TABLE, 'gpt-x'), undefined);
    assert.equal(rewritePriceOf(TABLE, 'constructor'), undefined, 'only the table own entries');
  });

  it("the answer's tokens at the model's prices, not the max_tokens estimate", () => {
    // 120 input tokens at $3/M + 85 output tokens at $15/M = $0.000360 + $0.001275.
    assert.deepEqual(rewriteCostUsd(price, enhance, prompt, { inputTokens: 120, outputTokens: 85 }), { usd: 0.001635, source: 'usage' });
    assert.deepEqual(rewriteCostUsd(price, enhance, prompt, { inputTokens: 0, outputTokens: 400 }), { usd: 0.006, source: 'usage' });
  });

  it('a usage missing, partial or not believable is ignored: the estimate stands, and says so', () => {
    const estimated = { usd: 0.0063, source: 'estimated' };
    for (const usage of [
      undefined,
      {},
      { inputTokens: 120 },
      { outputTokens: 85 },
      { inputTokens: -1, outputTokens: 85 },
      { inputTokens: 120, outputTokens: 1.5 },
      { inputTokens: 120, outputTokens: 401 }, // more than max_tokens: the call cannot have produced it
      { inputTokens: 5_000_000, outputTokens: 85 }, // no rewrite's prompt is that long
      { inputTokens: Number.MAX_VALUE, outputTokens: 85 },
      { inputTokens: Number.NaN, outputTokens: 85 },
      { inputTokens: '120', outputTokens: '85' },
      { inputTokens: null, outputTokens: 85 },
    ]) {
      assert.deepEqual(rewriteCostUsd(price, enhance, prompt, usage as never), estimated, JSON.stringify(usage));
    }
  });

  it('a per-call price is the cost of the call, whatever its tokens; no price: undefined', () => {
    assert.deepEqual(rewriteCostUsd({ perCall: 0.01 }, enhance, prompt, { inputTokens: 120, outputTokens: 85 }), {
      usd: 0.01,
      source: 'estimated',
    });
    assert.equal(rewriteCostUsd(undefined, enhance, prompt, { inputTokens: 120, outputTokens: 85 }), undefined);
    assert.equal(rewriteCostUsd({ perMillionInputTokens: 3 }, enhance, prompt, { inputTokens: 1, outputTokens: 1 }), undefined);
  });
});
