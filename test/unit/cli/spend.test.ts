// What a job spent, from its manifest rows' cost_usd (docs/costs.md), beside what its plan was
// estimated at: per model and in total, for the end of `run`, `status` and --json. Pure logic.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PlanEstimate } from '../../../client/estimate';
import { spendLines, spendOf } from '../../../client/spend';
import type { ManifestRow } from '../../../storage/manifest';

function row(key: string, model: string, cost?: { usd: number; source: 'billed' | 'estimated' }): ManifestRow {
  return {
    key,
    id: null,
    index: 1,
    state: 'succeeded',
    model,
    protocol: 'openai',
    prompt: key,
    task_id: 't',
    base_url: null,
    created_at: null,
    finished_at: '2026-01-01T00:00:00.000Z',
    polls: 1,
    file: null,
    bytes: null,
    sha256: null,
    error: null,
    ...(cost ? { cost_usd: cost.usd, cost_source: cost.source } : {}),
  };
}

const estimate: PlanEstimate = {
  currency: 'USD',
  total: 4.1,
  per_model: [
    { model: 'veo-3.1-fast-generate-001', role: 'video', items: 4, priced_items: 4, usd: 3.2, source: 'job file', assumed_seconds: {} },
    { model: 'seedance', role: 'video', items: 2, priced_items: 2, usd: 0.8, source: 'job file', assumed_seconds: {} },
    { model: 'claude', role: 'enhance', items: 6, priced_items: 6, usd: 0.1, source: 'job file', assumed_seconds: {} },
  ],
  unpriced_items: 0,
  unpriced_models: [],
};

describe('the spend of a job', () => {
  it('adds every row of every run, billed and estimated apart, per model and in total, beside the estimate', () => {
    const rows = [
      row('a', 'veo-3.1-fast-generate-001', { usd: 0.8, source: 'billed' }),
      row('a', 'veo-3.1-fast-generate-001', { usd: 0.8, source: 'estimated' }), // a second run of the same item: paid again
      row('b', 'veo-3.1-fast-generate-001', { usd: 0, source: 'estimated' }),
      { ...row('c', 'seedance', { usd: 0.4, source: 'estimated' }), rewrite_cost_usd: 0.02 }, // its rewrite: the enhance model's
      row('d', 'seedance'), // a row from before costs were recorded
    ];
    const spend = spendOf(rows, estimate);
    assert.deepEqual(spend, {
      currency: 'USD',
      spent_usd: 2.02,
      billed_usd: 0.8,
      usage_usd: 0,
      estimated_usd: 1.22,
      estimate_usd: 4.1,
      per_model: [
        { model: 'veo-3.1-fast-generate-001', spent_usd: 1.6, billed_usd: 0.8, usage_usd: 0, estimated_usd: 0.8, estimate_usd: 3.2 },
        { model: 'seedance', spent_usd: 0.4, billed_usd: 0, usage_usd: 0, estimated_usd: 0.4, estimate_usd: 0.8 },
        { model: 'claude', spent_usd: 0.02, billed_usd: 0, usage_usd: 0, estimated_usd: 0.02, estimate_usd: 0.1 },
      ],
    });
    assert.deepEqual(spendLines(spend!), [
      'spent:    $2.02 ($0.80 billed, $1.22 estimated) of $4.10 estimated',
      '  veo-3.1-fast-generate-001: $1.60 ($0.80 billed, $0.80 estimated) of $3.20 estimated',
      '  seedance: $0.40 ($0.00 billed, $0.40 estimated) of $0.80 estimated',
      '  claude: $0.02 ($0.00 billed, $0.02 estimated) of $0.10 estimated',
    ]);
  });

  it('says nothing for a job without prices or recorded costs', () => {
    const none: PlanEstimate = { currency: 'USD', total: 0, per_model: [], unpriced_items: 3, unpriced_models: [] };
    assert.equal(spendOf([row('a', 'veo-3.1-fast-generate-001')], none), undefined);
  });

  it("shows a gateway's billed figures for a job without prices, with no estimate", () => {
    const none: PlanEstimate = { currency: 'USD', total: 0, per_model: [], unpriced_items: 2, unpriced_models: [] };
    const spend = spendOf(
      [
        row('a', 'veo-3.1-fast-generate-001', { usd: 0.4, source: 'billed' }),
        row('b', 'veo-3.1-fast-generate-001', { usd: 0.4, source: 'billed' }),
      ],
      none,
    );
    assert.equal(spend?.estimate_usd, null);
    assert.deepEqual(spendLines(spend!), [
      'spent:    $0.80 ($0.80 billed, $0.00 estimated) with no estimate (no price)',
      '  veo-3.1-fast-generate-001: $0.80 ($0.80 billed, $0.00 estimated) with no estimate (no price)',
    ]);
  });

  it("counts prompt rewrites priced from their answer's usage apart from estimated ones, for the enhance model", () => {
    const rows: ManifestRow[] = [
      {
        ...row('a', 'veo-3.1-fast-generate-001', { usd: 0.4, source: 'billed' }),
        rewrite_cost_usd: 0.000171,
        rewrite_cost_source: 'usage',
      },
      {
        ...row('b', 'veo-3.1-fast-generate-001', { usd: 0.4, source: 'billed' }),
        rewrite_cost_usd: 0.000229,
        rewrite_cost_source: 'usage',
      },
      // A paid call whose answer carried no believable usage: its estimate.
      {
        ...row('c', 'veo-3.1-fast-generate-001', { usd: 0.4, source: 'billed' }),
        rewrite_cost_usd: 0.0063,
        rewrite_cost_source: 'estimated',
      },
      // A stored rewrite reused: nothing recorded for it.
      row('d', 'veo-3.1-fast-generate-001', { usd: 0.4, source: 'billed' }),
    ];
    const spend = spendOf(rows, estimate)!;
    const claude = spend.per_model.find((m) => m.model === 'claude');
    assert.deepEqual(claude, {
      model: 'claude',
      spent_usd: 0.0067,
      billed_usd: 0,
      usage_usd: 0.0004,
      estimated_usd: 0.0063,
      estimate_usd: 0.1,
    });
    assert.deepEqual([spend.spent_usd, spend.billed_usd, spend.usage_usd, spend.estimated_usd], [1.6067, 1.6, 0.0004, 0.0063]);
    assert.deepEqual(spendLines(spend), [
      'spent:    $1.61 ($1.60 billed, $0.0004 from usage, $0.0063 estimated) of $4.10 estimated',
      '  veo-3.1-fast-generate-001: $1.60 ($1.60 billed, $0.00 estimated) of $3.20 estimated',
      '  seedance: $0.00 ($0.00 billed, $0.00 estimated) of $0.80 estimated',
      '  claude: $0.0067 ($0.00 billed, $0.0004 from usage, $0.0063 estimated) of $0.10 estimated',
    ]);
  });

  it('counts the paid rewrite calls no row counts (reelflow enhance, an item left not started) for the enhance model too', () => {
    const rows: ManifestRow[] = [
      { ...row('a', 'veo-3.1-fast-generate-001', { usd: 0.4, source: 'billed' }), rewrite_cost_usd: 0.0002, rewrite_cost_source: 'usage' },
    ];
    const calls = [
      { cost_usd: 0.0003, cost_source: 'usage' as const },
      { cost_usd: 0.006, cost_source: 'estimated' as const },
      {}, // an unpriced call: no figure to add
    ];
    const claude = spendOf(rows, estimate, calls)!.per_model.find((m) => m.model === 'claude');
    assert.deepEqual([claude?.spent_usd, claude?.usage_usd, claude?.estimated_usd], [0.0065, 0.0005, 0.006]);
    // Nothing in any row, only a call `reelflow enhance` paid: still a spend to show.
    assert.equal(spendOf([], { ...estimate, per_model: [] }, calls.slice(0, 1))?.spent_usd, 0.0003);
  });
});
