// chainsOf: the plan's items joined by their needs, each chain its shots in plan order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chainsOf } from '../../../review/report/films';

test('items joined by needs are one chain in plan order; takes are one shot; lone items are no chain', () => {
  const chains = chainsOf([
    { key: 'a~t1' },
    { key: 'a~t2' },
    { key: 'x' },
    { key: 'b', needs: [{ key: 'a~t1', use: 'last_frame' }] },
    { key: 'y', needs: [{ key: 'x', use: 'after' }] },
    { key: 'c', needs: [{ key: 'b', use: 'video' }] },
    { key: 'lone' },
  ]);
  assert.deepEqual(chains, [
    ['a', 'b', 'c'],
    ['x', 'y'],
  ]);
});

test('two branches from one shot are one chain; a need of an item not in the plan joins nothing', () => {
  assert.deepEqual(
    chainsOf([
      { key: 'root' },
      { key: 'left', needs: [{ key: 'root', use: 'frame', at: 1 }] },
      { key: 'right', needs: [{ key: 'root', use: 'last_frame' }] },
      { key: 'orphan', needs: [{ key: 'gone', use: 'after' }] },
    ]),
    [['root', 'left', 'right']],
  );
  assert.deepEqual(chainsOf([]), []);
});
