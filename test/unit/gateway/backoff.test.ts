import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffDelay, parsePollAfter, parseRetryAfter } from '../../../gateway/backoff';

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it('reads delta-seconds', () => {
    assert.equal(parseRetryAfter('3', now), 3000);
    assert.equal(parseRetryAfter('0', now), 0);
    assert.equal(parseRetryAfter('1.5', now), 1500);
    assert.equal(parseRetryAfter(['2', '9'], now), 2000);
  });
  it('reads HTTP dates relative to now', () => {
    assert.equal(parseRetryAfter('Wed, 01 Jan 2025 00:00:10 GMT', now), 10_000);
    assert.equal(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now), 0);
  });
  it('ignores junk', () => {
    assert.equal(parseRetryAfter(undefined, now), undefined);
    assert.equal(parseRetryAfter('', now), undefined);
    assert.equal(parseRetryAfter('-5', now), undefined);
    assert.equal(parseRetryAfter('soon', now), undefined);
  });
  it('prefers openai-poll-after-ms for poll hints', () => {
    assert.equal(parsePollAfter({ 'openai-poll-after-ms': '2500', 'retry-after': '9' }, now), 2500);
    assert.equal(parsePollAfter({ 'retry-after': '9' }, now), 9000);
    assert.equal(parsePollAfter({}, now), undefined);
  });
  it('caps an absurd poll hint at an hour', () => {
    assert.equal(parsePollAfter({ 'openai-poll-after-ms': '999999999999' }, now), 3_600_000);
    assert.equal(parsePollAfter({ 'openai-poll-after-ms': '1e400' }, now), undefined);
    assert.equal(parsePollAfter({ 'retry-after': '86400' }, now), 3_600_000);
    assert.equal(parsePollAfter({ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' }, now), 3_600_000);
  });
});

describe('backoffDelay', () => {
  it('grows exponentially with jitter between half and all, capped', () => {
    assert.equal(backoffDelay(0, { baseMs: 100, random: () => 0 }), 50);
    assert.equal(backoffDelay(0, { baseMs: 100, random: () => 1 }), 100);
    assert.equal(backoffDelay(3, { baseMs: 100, random: () => 1 }), 800);
    assert.equal(backoffDelay(30, { baseMs: 100, maxMs: 5000, random: () => 1 }), 5000);
    assert.equal(backoffDelay(1000, { baseMs: 100, maxMs: 5000, random: () => 0 }), 2500);
    for (let i = 0; i < 50; i += 1) {
      const d = backoffDelay(2, { baseMs: 100 });
      assert.ok(d >= 200 && d <= 400);
    }
  });
});
