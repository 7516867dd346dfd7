// An item's charge, computed one way (domain/money.ts) for the running budget and the display.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRecordedAmount, itemChargeUsd, roundUsd } from '../../../domain/money';
import { rowTotalUsd } from '../../../client/spend';

describe('money', () => {
  it("an item's charge is its create and its rewrite together, to a millionth; nothing when it records neither", () => {
    assert.equal(itemChargeUsd({ createUsd: 0.1, rewriteUsd: 0.2 }), 0.3);
    assert.equal(itemChargeUsd({ createUsd: 0.4 }), 0.4);
    assert.equal(itemChargeUsd({ rewriteUsd: 0.000171 }), 0.000171);
    assert.equal(itemChargeUsd({}), undefined);
    assert.equal(roundUsd(0.1 * 3), 0.3);
  });

  it('the display charges a row the same, counting only amounts reelflow records', () => {
    assert.equal(rowTotalUsd({ cost_usd: 0.1, rewrite_cost_usd: 0.2 }), itemChargeUsd({ createUsd: 0.1, rewriteUsd: 0.2 }));
    assert.equal(rowTotalUsd({ cost_usd: -5, rewrite_cost_usd: 0.2 }), 0.2);
    for (const planted of [-1, Number.NaN, Infinity, '0.4', null]) assert.equal(isRecordedAmount(planted), false);
    assert.equal(isRecordedAmount(0), true);
  });
});
