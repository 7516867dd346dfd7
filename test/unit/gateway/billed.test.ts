// What a gateway says a create cost (docs/costs.md): LiteLLM's x-litellm-response-cost header
// (test/gateways/OBSERVED.md). Untrusted bytes: only a plain, bounded, non-negative number counts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { billedUsd } from '../../../gateway/billed';

describe('the billed cost of a create', () => {
  it("reads LiteLLM's response cost header", () => {
    assert.equal(billedUsd({ 'x-litellm-response-cost': '0.4' }), 0.4);
    assert.equal(billedUsd({ 'x-litellm-response-cost': '0' }), 0);
    assert.equal(billedUsd({ 'x-litellm-response-cost': '1.2e-05' }), 0.000012);
  });

  it('ignores an answer without it, and anything that is not a plain amount', () => {
    assert.equal(billedUsd({}), undefined);
    for (const bad of ['', 'NaN', '-1', 'Infinity', '0x10', '1'.repeat(40), '12 USD', '1e400']) {
      assert.equal(billedUsd({ 'x-litellm-response-cost': bad }), undefined, bad);
    }
    assert.equal(billedUsd({ 'x-litellm-response-cost': ['0.4', '0.8'] }), undefined);
  });
});
