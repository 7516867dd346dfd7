// The records of gateway/dialects, read together: the questions asked of all of them must not get
// two answers (a status word meaning two things), and each fact is asked of the record that holds it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { billedUsd } from '../../../gateway/billed';
import { classifyGatewayError, parseErrorBody } from '../../../gateway/classify';
import { DIALECTS, PUBLISHED_PRICES, STATUS_WORDS, says } from '../../../gateway/dialects';
import { AuthError, QuotaExhaustedError, RouteNotFoundError } from '../../../gateway/errors';
import { mapTaskStatus } from '../../../gateway/normalize';

describe('gateway/dialects', () => {
  it('names each gateway once', () => {
    assert.deepEqual(
      DIALECTS.map((d) => d.name),
      ['seed', 'litellm', 'new-api'],
    );
  });

  it('no status word means two things in two records', () => {
    for (const d of DIALECTS) {
      for (const [word, state] of Object.entries(d.statusWords)) {
        assert.equal(STATUS_WORDS[word], state, `${d.name}: ${word}`);
        assert.equal(mapTaskStatus(word.toUpperCase()).state, state, word);
      }
    }
  });

  it("each record's own words are read by classification", () => {
    const litellm = DIALECTS.find((d) => d.name === 'litellm')!;
    const newApi = DIALECTS.find((d) => d.name === 'new-api')!;
    const budget = JSON.stringify({ error: { message: 'Budget has been exceeded! Current cost: 1', type: 'budget_exceeded' } });
    assert.ok(says(parseErrorBody(budget), litellm.quotaExhausted));
    assert.ok(classifyGatewayError({ status: 400, body: budget }) instanceof QuotaExhaustedError);
    const quota = JSON.stringify({ error: { message: '用户额度不足, 剩余额度: ＄0.000000', type: 'new_api_error' } });
    assert.ok(says(parseErrorBody(quota), newApi.quotaExhausted));
    assert.ok(classifyGatewayError({ status: 403, body: quota }) instanceof QuotaExhaustedError);
    const noDb = JSON.stringify({ error: { message: 'No connected db.', type: 'no_db_connection', code: '400' } });
    assert.ok(classifyGatewayError({ status: 400, body: noDb }) instanceof AuthError);
    for (const missing of [{ detail: 'Not Found' }, { error: { message: 'Invalid URL (GET /v1/video/generations/x)' } }]) {
      assert.ok(classifyGatewayError({ status: 404, body: JSON.stringify(missing), operation: 'retrieve' }) instanceof RouteNotFoundError);
    }
  });

  it('asks the records that publish prices, in order, and reads the cost header its record names', () => {
    assert.deepEqual(
      PUBLISHED_PRICES.map((p) => [p.gateway, p.path, p.withKey]),
      [
        ['litellm', '/v1/model/info', true],
        ['new-api', '/api/pricing', false],
      ],
    );
    assert.equal(billedUsd({ 'x-litellm-response-cost': '0.4' }), 0.4);
  });
});
