// The window's "not ready yet" set (workflows/chain.ts) as pure bookkeeping: which items wait, start
// or end blocked, and that a blocked shot blocks the rest of its chain naming the first that failed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PageItem } from '../../../activities/plan';
import { MAX_WAITING, NeedsWindow } from '../../../workflows/chain';
import type { ChainCarry } from '../../../workflows/types';

function shot(n: number, needs: number[] = [], neededBy = false): PageItem {
  return {
    key: `s${n}`,
    index: n,
    outputName: `s${n}`,
    request: { model: 'm', protocol: 'general', prompt: `shot ${n}`, references: [] },
    needs: needs.map((k) => ({ key: `s${k}`, use: 'last_frame' as const })),
    ...(neededBy ? { neededBy: true } : {}),
  };
}

function windowWith(inFlight: string[] = []): { carry: ChainCarry; chain: NeedsWindow; inFlight: string[] } {
  const carry: ChainCarry = { waiting: [], ready: [], outcomes: {}, blocked: [] };
  return { carry, chain: new NeedsWindow(carry, () => inFlight), inFlight };
}

describe('NeedsWindow', () => {
  it('an item waits on a need in flight, and is ready once it succeeded', () => {
    const { chain } = windowWith(['s1']);
    const s2 = shot(2, [1]);
    assert.deepEqual(chain.readiness(s2), { ready: false, waitsOn: 's1' });
    chain.hold(s2);
    chain.ended(shot(1, [], true), 'succeeded');
    assert.deepEqual(chain.settle(), { ready: [s2], blocked: [] });
    assert.equal(chain.waiting.length, 0);
  });

  it('a need met by an earlier run (its output stored) counts as succeeded', () => {
    const { chain } = windowWith();
    assert.deepEqual(chain.readiness({ ...shot(2, [1]), needsMet: ['s1'] }), { ready: true });
  });

  it('a need neither in flight, waiting nor met in an earlier run blocks the item', () => {
    const { chain } = windowWith();
    const now = chain.readiness(shot(2, [1]));
    assert.ok('blockedBy' in now && now.blockedBy === 's1', JSON.stringify(now));
  });

  it('a failed shot blocks its dependents, and their dependents, naming the failed one', () => {
    const { chain, inFlight } = windowWith(['s3']);
    const s4 = shot(4, [3], true);
    const s5 = shot(5, [4], true);
    chain.hold(s4);
    chain.hold(s5);
    inFlight.length = 0;
    chain.ended(shot(3, [], true), 'failed');
    const first = chain.settle();
    assert.deepEqual(
      first.blocked.map((b) => [b.item.key, b.blockedBy, b.why]),
      [['s4', 's3', 's3 ended failed']],
    );
    chain.ended(s4, 'blocked', 's3');
    const second = chain.settle();
    assert.deepEqual(
      second.blocked.map((b) => [b.item.key, b.blockedBy]),
      [['s5', 's3']],
    );
  });

  it('keeps only the outcomes of items another needs, and is bounded', () => {
    const { carry, chain } = windowWith();
    chain.ended(shot(1), 'succeeded');
    chain.ended(shot(2, [], true), 'failed');
    assert.deepEqual(Object.keys(carry.outcomes), ['s2']);
    for (let n = 0; n < MAX_WAITING; n++) chain.hold(shot(100 + n, [2]));
    assert.equal(chain.full(), true);
  });
});
