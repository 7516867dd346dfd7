// What manifest rows may add to a job's spend: amounts only, so that nothing planted in a handed
// folder's manifest lowers what a budget counts (docs/costs.md, "Earlier runs count").
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { spentBefore } from '../../../activities/plan';
import { rowCostText, rowTotalUsd, spendOf } from '../../../client/spend';
import type { ManifestRow } from '../../../storage/manifest';
import { manifestRow } from '../../support/storage';

/** Costs as a planted row may hold them: JSON gives strings, negative numbers and, from 1e999, infinities. */
const PLANTED: unknown[] = [-1000, '-1000', '5', -Infinity, Infinity, Number.NaN, null, true, { usd: 1 }];

const planted = (n: number, cost: unknown, field: 'cost_usd' | 'rewrite_cost_usd' = 'cost_usd') =>
  manifestRow(n, { [field]: cost } as unknown as Partial<ManifestRow>);

describe('the spend of manifest rows counts amounts only', () => {
  it('earlier spend skips every cost that is not a finite amount 0 or more, and keeps the real ones', () => {
    const real = [manifestRow(1, { cost_usd: 1, cost_source: 'estimated' }), manifestRow(2, { rewrite_cost_usd: 0.25 })];
    for (const cost of PLANTED) {
      for (const field of ['cost_usd', 'rewrite_cost_usd'] as const) {
        const spent = spentBefore([...real, planted(3, cost, field)]);
        assert.equal(spent, 1.25, `${field} ${String(cost)}`);
      }
    }
    // Unrecorded rewrite calls too: a call's cost that is not an amount adds nothing, and takes nothing away.
    assert.equal(spentBefore(real, [{ cost_usd: -5 }, { cost_usd: 0.5 }]), 1.75);
  });

  it('the spend shown (status, results, the end of run) skips them as well: never $NaN or a negative', () => {
    const estimate = { currency: 'USD' as const, total: 6, per_model: [], unpriced_items: 0, unpriced_models: [] };
    const rows = [manifestRow(1, { cost_usd: 1, cost_source: 'estimated' }), planted(2, -1000), planted(3, '-1000'), planted(4, Infinity)];
    const spend = spendOf(rows, estimate as never);
    assert.equal(spend?.spent_usd, 1);
    assert.equal(rowTotalUsd(planted(2, -1000)), undefined);
    assert.equal(rowCostText(planted(3, '-1000')), '-');
  });
});
