import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Dice, mulberry32 } from '../../../sim/prng';

test('mulberry32 replays for a seed and stays in [0,1)', () => {
  const a = mulberry32(99);
  const b = mulberry32(99);
  const xs = Array.from({ length: 1000 }, () => a());
  assert.deepEqual(
    xs,
    Array.from({ length: 1000 }, () => b()),
  );
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
});

test('streams are independent: drawing from one does not shift another', () => {
  const d1 = new Dice(5);
  const d2 = new Dice(5);
  for (let i = 0; i < 10; i++) d1.next('errors');
  assert.equal(d1.next('resets'), d2.next('resets'));
});

test('chance with 0 and 1 is exact and consumes nothing', () => {
  const d = new Dice(1);
  const ref = new Dice(1);
  assert.equal(d.chance('x', 0), false);
  assert.equal(d.chance('x', 1), true);
  assert.equal(d.chance('x', undefined), false);
  assert.equal(d.next('x'), ref.next('x'));
  const hits = Array.from({ length: 2000 }, () => d.chance('y', 0.3)).filter(Boolean).length;
  assert.ok(hits > 500 && hits < 700, `hits ${hits}`);
  const b = Array.from({ length: 200 }, () => d.between('z', 3, 5));
  assert.deepEqual([...new Set(b)].sort(), [3, 4, 5]);
});
