// What the pool tells its observer (the worker's failover and cooldown metrics), with a fake clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BaseUrlPool, type PoolEvent } from '../../../gateway/pool';

const A = 'http://127.0.0.1:1';
const B = 'http://127.0.0.1:2';
const C = 'http://127.0.0.1:3';

function observed(bases: string[]): { pool: BaseUrlPool; events: PoolEvent[]; advance: (ms: number) => void } {
  let t = 1_000_000;
  const events: PoolEvent[] = [];
  const pool = new BaseUrlPool(bases, { now: () => t, cooldownMs: 1000, maxCooldownMs: 8000, onEvent: (e) => events.push(e) });
  return { pool, events, advance: (ms) => (t += ms) };
}

describe('BaseUrlPool events', () => {
  it('reports a failing primary as one cooldown and one failover to the next healthy base', () => {
    const { pool, events } = observed([A, B, C]);
    pool.reportFailure(A);
    assert.deepEqual(events, [
      { type: 'cooldown', baseUrl: A, cooldownMs: 1000, consecutiveFailures: 1 },
      { type: 'failover', from: A, to: B },
    ]);
  });

  it('counts an outage once: calls in flight that fail on the cooling base add no event', () => {
    const { pool, events } = observed([A, B]);
    pool.reportFailure(A);
    pool.reportFailure(A);
    pool.reportFailure(A, 3000); // a Retry-After lengthens the cooldown, but it is the same outage
    assert.equal(events.filter((e) => e.type === 'cooldown').length, 1);
    assert.equal(events.filter((e) => e.type === 'failover').length, 1);
  });

  it('reports each failed probe after a cooldown as a new step, with its doubled cooldown', () => {
    const { pool, events, advance } = observed([A, B]);
    pool.reportFailure(A);
    advance(1000);
    pool.reportFailure(A);
    advance(2000);
    pool.reportFailure(A);
    const cooldowns = events.filter((e) => e.type === 'cooldown');
    assert.deepEqual(
      cooldowns.map((e) => e.cooldownMs),
      [1000, 2000, 4000],
    );
    assert.equal(events.filter((e) => e.type === 'failover').length, 3);
  });

  it('reports no failover when no other base is healthy: traffic waits, it does not move', () => {
    const single = observed([A]);
    single.pool.reportFailure(A);
    assert.deepEqual(
      single.events.map((e) => e.type),
      ['cooldown'],
    );
    const both = observed([A, B]);
    both.pool.reportFailure(A);
    both.pool.reportFailure(B);
    assert.deepEqual(
      both.events.map((e) => (e.type === 'failover' ? `failover ${e.from}` : `cooldown ${e.baseUrl}`)),
      [`cooldown ${A}`, `failover ${A}`, `cooldown ${B}`],
    );
  });

  it('reports nothing for successes, and a listener that throws changes nothing', () => {
    const { pool, events } = observed([A, B]);
    pool.reportSuccess(A);
    assert.deepEqual(events, []);
    const throwing = new BaseUrlPool([A, B], {
      onEvent: () => {
        throw new Error('broken observer');
      },
    });
    assert.ok(throwing.reportFailure(A) > 0);
    assert.equal(throwing.pick(), B);
  });

  it('reports a base that answers again after failures as recovered, once, and carries the failure reason', () => {
    const { pool, events, advance } = observed([A, B]);
    pool.reportSuccess(A); // never failed: nothing to say
    pool.reportFailure(A, 0, 'HTTP 503');
    advance(1000);
    pool.reportFailure(A, 0, 'connection refused');
    advance(2000);
    pool.reportSuccess(A);
    pool.reportSuccess(A);
    assert.deepEqual(
      events.filter((e) => e.type !== 'failover'),
      [
        { type: 'cooldown', baseUrl: A, cooldownMs: 1000, consecutiveFailures: 1, reason: 'HTTP 503' },
        { type: 'cooldown', baseUrl: A, cooldownMs: 2000, consecutiveFailures: 2, reason: 'connection refused' },
        { type: 'recovered', baseUrl: A, failures: 2 },
      ],
    );
  });
});
