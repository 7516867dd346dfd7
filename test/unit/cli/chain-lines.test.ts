import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundedList, chainLines, waitingFromRows } from '../../../cli/chain-lines';
import { displayWidth } from '../../../client/terminal-text';

describe('chain lines', () => {
  it('a long chain is one line per kind, cut to the width with how many more', () => {
    const waiting = Array.from({ length: 500 }, (_, i) => ({ key: `shot-${i + 2}`, waitsOn: `shot-${i + 1}` }));
    const lines = chainLines({ waiting, counts: { blocked: 0 } as never }, 70);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^waiting: shot-2 \(on shot-1\), shot-3 \(on shot-2\), … and 498 more$/);
    assert.ok(displayWidth(lines[0]!) <= 70);
    // Too narrow for one whole entry: the first is cut, never wrapped.
    assert.ok(displayWidth(chainLines({ waiting, counts: { blocked: 0 } as never }, 20)[0]!) <= 20);
  });

  it('blocked: the latest first, counted in full, with why', () => {
    const blocked = [
      { key: 'shot-3', blockedBy: 'shot-2', why: 'shot-2 ended failed' },
      { key: 'shot-4', blockedBy: 'shot-2', why: 'shot-3 was blocked by shot-2' },
    ];
    assert.deepEqual(chainLines({ blocked, counts: { blocked: 30 } as never }, 200), [
      'blocked: shot-4 (shot-3 was blocked by shot-2), shot-3 (shot-2 ended failed), … and 28 more',
    ]);
    assert.deepEqual(chainLines({ counts: { blocked: 0 } as never }, 80), []);
  });

  it('control characters in keys are shown as plain text', () => {
    assert.equal(boundedList('waiting', ['a\u001b[31mred (on b)'], 1, 80), 'waiting: ared (on b)');
  });

  it('results: an item without a row waits on its first need that has not succeeded', () => {
    const items = [
      { key: 'a' },
      { key: 'b', needs: [{ key: 'a', use: 'last_frame' as const }] },
      {
        key: 'c',
        needs: [
          { key: 'a', use: 'after' as const },
          { key: 'b', use: 'last_frame' as const },
        ],
      },
    ];
    assert.deepEqual(waitingFromRows(items, new Map([['a', { state: 'succeeded' as const }]])), [{ key: 'c', waitsOn: 'b' }]);
  });
});
