import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDuration, parseRate, parseRenderTime, parseSize } from '../../../sim/units';

test('durations', () => {
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('5s'), 5000);
  assert.equal(parseDuration('1.5m'), 90_000);
  assert.equal(parseDuration('2h'), 7_200_000);
  assert.equal(parseDuration('750'), 750);
  assert.throws(() => parseDuration('soon'), /not a duration/);
  assert.throws(() => parseDuration('-5s'), /not a duration/);
});

test('render times: fixed or range', () => {
  assert.equal(parseRenderTime('5s'), 5000);
  assert.deepEqual(parseRenderTime('20s..90s'), [20_000, 90_000]);
  assert.throws(() => parseRenderTime('90s..20s'), /reversed/);
  assert.throws(() => parseRenderTime('1s..2s..3s'), /not a render time/);
});

test('sizes are binary', () => {
  assert.equal(parseSize('1MB'), 1024 * 1024);
  assert.equal(parseSize('512KB'), 512 * 1024);
  assert.equal(parseSize('1GiB'), 1024 ** 3);
  assert.equal(parseSize('1000'), 1000);
  assert.throws(() => parseSize('lots'), /not a size/);
});

test('rates', () => {
  assert.equal(parseRate('0.25'), 0.25);
  assert.equal(parseRate('5%'), 0.05);
  assert.throws(() => parseRate('2'), /between 0 and 1/);
  assert.throws(() => parseRate('x'), /between 0 and 1/);
});
