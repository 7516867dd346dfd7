// Prices in the job file and in LiteLLM-format prices files (docs/costs.md): which wins, which entries
// are read, and bad prices refused at their file, line and column.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadJobFile } from '../../../jobfile';
import { errorsOf, HEAD, load, plan, RUN_DATE, tempJobDir } from './helpers';

// Entries written for these tests in the shape of LiteLLM's model_prices_and_context_window.json.
const LITELLM_MAP = `{
    "sample_spec": {
        "output_cost_per_second": "the price of one second of output",
        "mode": "one of: chat, video_generation"
    },
    "gemini/veo-3.1-fast-generate-001": {
        "litellm_provider": "openai",
        "mode": "video_generation",
        "output_cost_per_video_per_second": 0.1,
        "supported_resolutions": ["720x1280", "1280x720"]
    },
    "gemini/veo-3.1-generate-001": {
        "litellm_provider": "openai",
        "mode": "video_generation",
        "output_cost_per_second_720p": 0.3,
        "output_cost_per_second_1080p": 0.5
    },
    "vertex_ai/veo-3.1-generate-preview": {
        "litellm_provider": "vertex_ai-video-models",
        "mode": "video_generation",
        "output_cost_per_second": 0.4,
        "output_cost_per_second_4k": 0.6
    },
    "claude-sonnet-4-6": {
        "input_cost_per_token": 3e-06,
        "output_cost_per_token": 1.5e-05,
        "litellm_provider": "anthropic",
        "mode": "chat"
    },
    "broken-elsewhere": {
        "output_cost_per_second": -1
    }
}
`;

const ITEMS = `items:
  - prompt: a
    model: veo-3.1-fast-generate-001
    protocol: openai
    seconds: "8"
  - prompt: b
    model: veo-3.1-generate-001
    protocol: openai
  - prompt: c
    model: veo-3.1-generate-preview
  - prompt: d
`;

describe('pricing in the job file', () => {
  it('per_second (a number or by resolution), per_video, per token, default_seconds', async () => {
    const p = await plan(`${HEAD}${ITEMS}enhance:
  model: claude-sonnet-4-6
pricing:
  veo-3.1-fast-generate-001: {per_second: 0.10}
  veo-3.1-generate-001:
    per_second: {720p: 0.30, 1080P: 0.50, 4k: 0.9}
    default_seconds: 8
  veo-3.1-generate-preview: {per_second: 0.4}
  seedance-1-0-pro-250528: {per_video: 0.5}
  claude-sonnet-4-6: {per_million_input_tokens: 3, per_million_output_tokens: 15}
budget:
  max_usd: 50
`);
    assert.deepEqual(p.pricing, {
      'claude-sonnet-4-6': { source: 'job file', perMillionInputTokens: 3, perMillionOutputTokens: 15 },
      'seedance-1-0-pro-250528': { source: 'job file', perVideo: 0.5 },
      'veo-3.1-fast-generate-001': { source: 'job file', perSecond: 0.1 },
      'veo-3.1-generate-001': { source: 'job file', perSecondByResolution: { '720p': 0.3, '1080p': 0.5, '2160p': 0.9 }, defaultSeconds: 8 },
      'veo-3.1-generate-preview': { source: 'job file', perSecond: 0.4 },
    });
    assert.deepEqual(p.budget, { maxUsd: 50 });
    assert.deepEqual(p.warnings, []);
  });

  it('a job without prices has no price table and no budget', async () => {
    const p = await plan(`${HEAD}items:\n  - prompt: a\n`);
    assert.equal(p.pricing, undefined);
    assert.equal(p.budget, undefined);
  });

  it('a price for a model the job does not use is a warning', async () => {
    const p = await plan(`${HEAD}items:\n  - prompt: a\npricing:\n  veo-3: {per_second: 0.4}\n`);
    assert.deepEqual(p.pricing, {});
    assert.equal(p.warnings.length, 1);
    assert.match(p.warnings[0] ?? '', /job\.yaml:9:10: warning: pricing\.veo-3 is not used: no item renders with veo-3/);
  });

  it('an unused price whose name is close to an unpriced model suggests it', async () => {
    const p = await plan(`${HEAD}items:\n  - prompt: a\npricing:\n  seedance-1-0-pro-250529: {per_video: 0.5}\n`);
    assert.match(p.warnings[0] ?? '', /pricing\.seedance-1-0-pro-250529 is not used: .*; did you mean seedance-1-0-pro-250528\?$/);
  });
});

describe('bad prices are refused at their line, saying what is allowed', () => {
  const head = `${HEAD}items:\n  - prompt: a\npricing:\n  seedance-1-0-pro-250528:\n`; // the price's keys from line 10

  it('a negative price', async () => {
    assert.deepEqual(await errorsOf(`${head}    per_second: -0.1\n`), [
      '10:17: pricing.seedance-1-0-pro-250528.per_second must be a price in USD: a number 0 or more, such as 0.10, got -0.1',
    ]);
  });

  it('a price that is not a number', async () => {
    assert.deepEqual(await errorsOf(`${head}    per_video: "$0.50"\n`), [
      '10:16: pricing.seedance-1-0-pro-250528.per_video must be a price in USD: a number 0 or more, such as 0.10, got "$0.50"',
    ]);
  });

  it('a negative price by resolution', async () => {
    assert.deepEqual(await errorsOf(`${head}    per_second:\n      720p: 0.1\n      1080p: -3\n`), [
      '12:14: pricing.seedance-1-0-pro-250528.per_second.1080p: a per-resolution price must be a price in USD: a number 0 or more, such as 0.10, got -3',
    ]);
  });

  it('an unknown resolution key', async () => {
    assert.deepEqual(await errorsOf(`${head}    per_second: {720p: 0.1, hd: 0.3}\n`), [
      '10:33: pricing.seedance-1-0-pro-250528.per_second.hd: "hd" is not a resolution: per_second is by resolution such as 480p, 720p, 1080p, 2k or 4k',
    ]);
  });

  it('a size where a resolution belongs says which resolution it is', async () => {
    assert.deepEqual(await errorsOf(`${head}    per_second: {1280x720: 0.1}\n`), [
      '10:28: pricing.seedance-1-0-pro-250528.per_second.1280x720: "1280x720" is not a resolution: per_second is by resolution such as 480p, 720p, 1080p, 2k or 4k (a size is priced by its shorter side: 1280x720 is 720p)',
    ]);
  });

  it('per_second and per_video together', async () => {
    assert.deepEqual(await errorsOf(`${head}    per_second: 0.1\n    per_video: 0.5\n`), [
      '11:16: pricing.seedance-1-0-pro-250528.per_video: a model is priced per_second or per_video, not both: remove one',
    ]);
  });

  it('half a per-token price', async () => {
    assert.deepEqual(await errorsOf(`${head}    per_million_input_tokens: 3\n`), [
      '10:5: pricing.seedance-1-0-pro-250528: a per-token price needs both per_million_input_tokens and per_million_output_tokens: add per_million_output_tokens',
    ]);
  });

  it('an empty price and an unknown key', async () => {
    assert.deepEqual(await errorsOf(`${head}    per_secnd: 0.1\n`), [
      "10:5: pricing.seedance-1-0-pro-250528.per_secnd: unknown key 'per_secnd', did you mean 'per_second'?",
      '10:5: pricing.seedance-1-0-pro-250528: a price needs per_second, per_video, or per_million_input_tokens and per_million_output_tokens',
    ]);
  });

  it('a budget that is not a positive number', async () => {
    const budget = `${HEAD}items:\n  - prompt: a\nbudget:\n`;
    assert.deepEqual(await errorsOf(`${budget}  max_usd: 0\n`), [
      '9:12: budget.max_usd must be a number of US dollars above 0, such as 50, got 0',
    ]);
    assert.deepEqual(await errorsOf(`${budget}  max_usd: "50"\n`), [
      '9:12: budget.max_usd must be a number of US dollars above 0, such as 50, got "50"',
    ]);
    assert.deepEqual(await errorsOf(`${budget}  max_dollars: 5\n`), [
      "9:3: budget.max_dollars: unknown key 'max_dollars' in budget; allowed keys: max_usd",
      "9:3: budget.max_usd: budget is missing required key 'max_usd'",
    ]);
  });
});

describe('prices files in LiteLLM format', () => {
  it('pricing_file: provider-prefixed entries, per-video-second, per-resolution keys, per token; the job file wins', async () => {
    const p = await plan(
      `${HEAD}${ITEMS}enhance:\n  model: claude-sonnet-4-6\npricing_file: prices/litellm.json\npricing:\n  veo-3.1-generate-preview: {per_second: 0.35}\n`,
      { 'prices/litellm.json': LITELLM_MAP },
    );
    assert.deepEqual(p.pricing, {
      'claude-sonnet-4-6': {
        source: 'prices/litellm.json (claude-sonnet-4-6)',
        perMillionInputTokens: 3,
        perMillionOutputTokens: 15,
      },
      'veo-3.1-fast-generate-001': { source: 'prices/litellm.json (gemini/veo-3.1-fast-generate-001)', perSecond: 0.1 },
      'veo-3.1-generate-001': {
        source: 'prices/litellm.json (gemini/veo-3.1-generate-001)',
        perSecondByResolution: { '720p': 0.3, '1080p': 0.5 },
      },
      'veo-3.1-generate-preview': { source: 'job file', perSecond: 0.35 },
    });
    // seedance-1-0-pro-250528 (the last item) is in neither: it stays out of the table, unpriced.
  });

  it('per-resolution keys with a plain per-second fallback, 4k as 2160p', async () => {
    const p = await plan(`${HEAD}${ITEMS}pricing_file: litellm.json\n`, { 'litellm.json': LITELLM_MAP });
    assert.deepEqual(p.pricing?.['veo-3.1-generate-preview'], {
      source: 'litellm.json (vertex_ai/veo-3.1-generate-preview)',
      perSecond: 0.4,
      perSecondByResolution: { '2160p': 0.6 },
    });
  });

  it("the user's prices win: --prices, then the settings file, then the job file, then pricing_file; a lower job price is named", async () => {
    const dir = tempJobDir({
      'job.yaml': `${HEAD}${ITEMS}pricing_file: litellm.json\npricing:\n  veo-3.1-fast-generate-001: {per_second: 0.12}\n  veo-3.1-generate-001: {per_second: 0.5}\n`,
      'litellm.json': LITELLM_MAP,
      'mine.json': JSON.stringify({
        'veo-3.1-generate-001': { output_cost_per_second: 0.25 },
        'veo-3.1-fast-generate-001': { output_cost_per_second: 0.2 },
      }),
      'settings/prices.json': JSON.stringify({
        'veo-3.1-fast-generate-001': { output_cost_per_second: 0.9 },
        'veo-3.1-generate-preview': { output_cost_per_second: 0.45 },
      }),
    });
    const r = await loadJobFile(join(dir, 'job.yaml'), {
      runDate: RUN_DATE,
      pricesFile: join(dir, 'mine.json'),
      userPricesFile: join(dir, 'settings/prices.json'),
    });
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    assert.deepEqual(r.plan.pricing?.['veo-3.1-fast-generate-001'], {
      source: `${join(dir, 'mine.json')} (veo-3.1-fast-generate-001)`,
      perSecond: 0.2,
    });
    // Above the user's: the user's is used, and nothing is said.
    assert.deepEqual(r.plan.pricing?.['veo-3.1-generate-001'], {
      source: `${join(dir, 'mine.json')} (veo-3.1-generate-001)`,
      perSecond: 0.25,
    });
    assert.deepEqual(
      r.plan.pricing?.['veo-3.1-generate-preview']?.source,
      `${join(dir, 'settings/prices.json')} (veo-3.1-generate-preview)`,
    );
    assert.deepEqual(
      r.plan.warnings.filter((w) => w.includes('your price')),
      [
        `${join(dir, 'job.yaml')}:19:30: warning: pricing.veo-3.1-fast-generate-001 is below your price for veo-3.1-fast-generate-001 ($0.96 against $1.60 an item, from ${join(dir, 'mine.json')} (veo-3.1-fast-generate-001)): your price is used`,
      ],
    );
    // Without the user's files, the job file's own prices, then pricing_file, as before.
    const alone = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE, userPricesFile: join(dir, 'none.json') });
    assert.ok(alone.ok);
    assert.deepEqual(alone.plan.pricing?.['veo-3.1-fast-generate-001'], { source: 'job file', perSecond: 0.12 });
    assert.deepEqual(alone.plan.pricing?.['veo-3.1-generate-preview']?.source, 'litellm.json (vertex_ai/veo-3.1-generate-preview)');
  });

  it('a job file price of $0 for a model the user has not priced: refused at its line under --budget, a warning under its own budget', async () => {
    const yaml = `${HEAD}items:\n  - prompt: a\npricing:\n  seedance-1-0-pro-250528: {per_video: 0}\n`;
    const dir = tempJobDir({ 'job.yaml': yaml, 'budgeted.yaml': `${yaml}budget:\n  max_usd: 5\n` });
    const refused = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE, budgetUsd: 2 });
    assert.equal(refused.ok, false);
    assert.deepEqual(refused.ok ? [] : refused.errors.map((e) => `${e.line}:${e.column}: ${e.message}`), [
      '9:28: pricing.seedance-1-0-pro-250528 prices seedance-1-0-pro-250528 at $0 under --budget 2: the budget would count nothing for it; ' +
        'give seedance-1-0-pro-250528 a price of your own (--prices FILE, or ~/.config/reelflow/prices.json), or run without --budget',
    ]);
    const own = await loadJobFile(join(dir, 'budgeted.yaml'), { runDate: RUN_DATE });
    assert.ok(own.ok);
    assert.match(
      own.plan.warnings.join('\n'),
      /budgeted\.yaml:9:28: warning: pricing\.seedance-1-0-pro-250528 prices .* at \$0: budget\.max_usd counts nothing for it/,
    );
    // With the user's price for it, the user's is used: no refusal, the job file's named as below it.
    const mine = join(dir, 'mine.json');
    writeFileSync(mine, JSON.stringify({ 'seedance-1-0-pro-250528': { output_cost_per_second: 0.2 } }));
    const priced = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE, budgetUsd: 2, pricesFile: mine });
    assert.ok(priced.ok, priced.ok ? '' : JSON.stringify(priced.errors));
    assert.equal(priced.plan.pricing?.['seedance-1-0-pro-250528']?.perSecond, 0.2);
    assert.match(
      priced.plan.warnings.join('\n'),
      /job\.yaml:9:28: warning: pricing\.seedance-1-0-pro-250528 is below your price .*\$0\.00 against \$1\.00 an item/,
    );
    // Without a budget, $0 is a job's own business: nothing said.
    const free = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE });
    assert.ok(free.ok);
    assert.deepEqual(free.plan.warnings, []);
  });

  it('a bad price in an entry the job uses is refused at its line in the prices file; elsewhere it is ignored', async () => {
    const map = LITELLM_MAP.replace('"output_cost_per_second_1080p": 0.5', '"output_cost_per_second_1080p": "0.5"').replace(
      '"output_cost_per_second_720p": 0.3',
      '"output_cost_per_second_hd": 0.3',
    );
    assert.deepEqual(await errorsOf(`${HEAD}${ITEMS}pricing_file: litellm.json\n`, { 'litellm.json': map }), [
      'litellm.json:15:9: gemini/veo-3.1-generate-001.output_cost_per_second_hd: "hd" is not a resolution; use one such as 480p, 720p, 1080p, 2k or 4k',
      'litellm.json:16:41: gemini/veo-3.1-generate-001.output_cost_per_second_1080p must be a price in USD: a number 0 or more, such as 0.10, got "0.5"',
    ]);
  });

  it('a file that is not JSON, or not a map, is refused with where', async () => {
    assert.deepEqual(
      await errorsOf(`${HEAD}items:\n  - prompt: a\npricing_file: p.json\n`, { 'p.json': '{\n  "a": {\n    "b": 1,\n  }\n}\n' }),
      [`p.json:4:3: not valid JSON here; a prices file is LiteLLM's model cost map: {"MODEL": {"output_cost_per_second": 0.10}}`],
    );
    // The text near the fault is not quoted back: a file named by mistake may hold a key.
    const key = `sk-${'a'.repeat(40)}`;
    const errors = await errorsOf(`${HEAD}items:\n  - prompt: a\npricing_file: p.json\n`, { 'p.json': `${key}\n` });
    assert.equal(errors.length, 1);
    assert.ok(!errors[0]?.includes('sk-'), errors[0]);
    assert.deepEqual(await errorsOf(`${HEAD}items:\n  - prompt: a\npricing_file: p.json\n`, { 'p.json': '[1]' }), [
      "p.json:1:1: a prices file is a JSON object from model name to its prices (LiteLLM's model cost map), got a list",
    ]);
  });

  it('a missing file, or one outside the job folder, is refused at pricing_file', async () => {
    const missing = await load(`${HEAD}items:\n  - prompt: a\npricing_file: nope.json\n`);
    assert.equal(missing.ok, false);
    if (missing.ok) return;
    assert.deepEqual(
      missing.errors.map((e) => `${e.line}:${e.column}: ${e.message}`),
      [`8:15: pricing_file: prices file "nope.json" cannot be read: no such file (looked for ${join(missing.dir, 'nope.json')})`],
    );
    const outside = tempJobDir({ 'shared.json': LITELLM_MAP });
    const errors = await errorsOf(`${HEAD}items:\n  - prompt: a\npricing_file: ${join(outside, 'shared.json')}\n`);
    assert.equal(errors.length, 1);
    assert.match(
      errors[0] ?? '',
      /^8:15: pricing_file: .*shared\.json is outside the job file's folder .*run with --allow-read .*; a job file cannot allow it$/,
    );
  });

  it('--prices never reads system files, and says why it cannot read one', async () => {
    const dir = tempJobDir({ 'job.yaml': `${HEAD}items:\n  - prompt: a\n` });
    for (const [file, why] of [
      ['/proc/self/environ', /^--prices: \/proc\/self\/environ is under \/proc .*system files are never read$/],
      [join(dir, 'none.json'), /^--prices: prices file ".*none\.json" cannot be read: no such file/],
    ] as const) {
      const r = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE, pricesFile: file });
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.deepEqual(
        r.errors.map((e) => [e.file, e.line]),
        [[file, 0]],
      );
      assert.match(r.errors[0]?.message ?? '', why);
    }
  });

  it('models that match several provider entries with different prices stay unpriced, with a warning', async () => {
    const map = JSON.stringify({
      'gemini/veo-3.1-fast-generate-001': { output_cost_per_second: 0.1 },
      'vertex_ai/veo-3.1-fast-generate-001': { output_cost_per_second: 0.12 },
    });
    const p = await plan(
      `${HEAD}items:\n  - prompt: a\n    model: veo-3.1-fast-generate-001\n    protocol: openai\npricing_file: p.json\n`,
      {
        'p.json': map,
      },
    );
    assert.deepEqual(p.pricing, {});
    assert.equal(p.warnings.length, 1);
    assert.match(
      p.warnings[0] ?? '',
      /\/p\.json: warning: veo-3.1-fast-generate-001 matches gemini\/veo-3\.1-fast-generate-001, vertex_ai\/veo-3\.1-fast-generate-001 with different prices; it stays unpriced: add pricing\.veo-3.1-fast-generate-001 to the job file$/,
    );
  });
});
