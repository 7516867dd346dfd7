import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BaseUrlPool } from '../../../gateway/pool';

function fakeClock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

const A = 'http://127.0.0.1:1';
const B = 'http://127.0.0.1:2';
const C = 'http://127.0.0.1:3';

describe('BaseUrlPool', () => {
  it('uses the primary first while it is healthy', () => {
    const pool = new BaseUrlPool([A, B, C], { now: fakeClock().now });
    assert.equal(pool.pick(), A);
    pool.reportSuccess(A);
    assert.equal(pool.pick(), A);
  });

  it('moves to the next healthy base when one fails, and back after the cooldown (probe)', () => {
    const clock = fakeClock();
    const pool = new BaseUrlPool([A, B, C], { now: clock.now, cooldownMs: 1000, maxCooldownMs: 10_000 });
    assert.equal(pool.reportFailure(A), 1000);
    assert.equal(pool.pick(), B);
    assert.equal(pool.isHealthy(A), false);
    clock.advance(999);
    assert.equal(pool.pick(), B);
    clock.advance(1);
    assert.equal(pool.pick(), A, 'probed again once the cooldown ends');
  });

  it('grows the cooldown with repeated failures, capped, and resets on success', () => {
    const clock = fakeClock();
    const pool = new BaseUrlPool([A, B], { now: clock.now, cooldownMs: 1000, maxCooldownMs: 5000 });
    assert.equal(pool.reportFailure(A), 1000);
    clock.advance(1000);
    assert.equal(pool.reportFailure(A), 2000);
    clock.advance(2000);
    assert.equal(pool.reportFailure(A), 4000);
    clock.advance(4000);
    assert.equal(pool.reportFailure(A), 5000);
    assert.equal(pool.snapshot()[0]?.consecutiveFailures, 4);
    clock.advance(5000);
    pool.reportSuccess(A);
    assert.equal(pool.reportFailure(A), 1000);
  });

  it('failures reported in the same outage (calls that were in flight) grow the cooldown once', () => {
    const clock = fakeClock();
    const pool = new BaseUrlPool([A, B], { now: clock.now, cooldownMs: 1000, maxCooldownMs: 60_000 });
    assert.equal(pool.reportFailure(A), 1000);
    assert.equal(pool.reportFailure(A), 1000, 'a second failure in the same instant does not double it');
    clock.advance(400);
    assert.equal(pool.reportFailure(A), 600, 'nor one while it is cooling down');
    assert.equal(pool.reportFailure(A, 5000), 5000, 'a Retry-After still lengthens it');
    assert.equal(pool.snapshot()[0]?.consecutiveFailures, 1);
    clock.advance(5000);
    assert.equal(pool.reportFailure(A), 2000, 'a failed probe after the cooldown doubles it');
  });

  it('honours a minimum cooldown (Retry-After on 503)', () => {
    const pool = new BaseUrlPool([A], { now: fakeClock().now, cooldownMs: 1000 });
    assert.equal(pool.reportFailure(A, 7000), 7000);
  });

  it('when all are cooling, picks the one whose cooldown ends first', () => {
    const clock = fakeClock();
    const pool = new BaseUrlPool([A, B, C], { now: clock.now, cooldownMs: 1000 });
    pool.reportFailure(A, 2000); // A: 2000
    clock.advance(100);
    pool.reportFailure(B); // B ends at +1100
    pool.reportFailure(C, 500); // C ends at +1100 too, but later in order
    clock.advance(10);
    assert.deepEqual(pool.order(), [B, C, A]);
    assert.equal(pool.pick(), B);
    assert.equal(pool.cooldownRemaining(B), 990);
  });

  it('puts excluded bases last', () => {
    const pool = new BaseUrlPool([A, B, C], { now: fakeClock().now });
    assert.equal(pool.pick(new Set([A])), B);
    assert.equal(pool.pick(new Set([A, B, C])), A);
  });

  it('dedupes and rejects empty lists', () => {
    assert.deepEqual(new BaseUrlPool([A, A, B]).baseUrls, [A, B]);
    assert.throws(() => new BaseUrlPool([]));
  });
});
