import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { test } from 'node:test';
import { parseRange } from '../../../sim/content';
import { SAMPLE_MP4, freeBoxHeader, normaliseSize, padVideo, sizeFromResolution } from '../../../sim/mp4';

test('free box headers: 32-bit, 64-bit, and too small to exist', () => {
  const small = freeBoxHeader(1000) as Buffer;
  assert.equal(small.length, 8);
  assert.equal(small.readUInt32BE(0), 1000);
  assert.equal(small.subarray(4, 8).toString('latin1'), 'free');
  const big = freeBoxHeader(5 * 1024 ** 3) as Buffer;
  assert.equal(big.length, 16);
  assert.equal(big.readUInt32BE(0), 1);
  assert.equal(big.readBigUInt64BE(8), BigInt(5 * 1024 ** 3));
  assert.equal(freeBoxHeader(7), null);
  assert.equal(freeBoxHeader(8)?.length, 8);
});

test('padVideo reaches the exact size or serves the file as is', () => {
  const mp4 = Buffer.alloc(100, 1);
  assert.equal(padVideo(mp4, 1000).total, 1000);
  assert.equal(padVideo(mp4, 50).total, 100);
  assert.equal(padVideo(mp4, 104).total, 100, 'a 4-byte gap cannot hold a box');
  assert.equal(padVideo(mp4, undefined).total, 100);
  assert.notEqual(padVideo(mp4, 1000).etag, padVideo(mp4, 2000).etag);
});

test('shipped sample is a small real MP4', () => {
  assert.ok(statSync(SAMPLE_MP4).size < 50 * 1024);
  assert.equal(readFileSync(SAMPLE_MP4).subarray(4, 8).toString('latin1'), 'ftyp');
});

test('ranges', () => {
  assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
  assert.deepEqual(parseRange('bytes=90-', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=50-500', 100), { start: 50, end: 99 });
  assert.deepEqual(parseRange('bytes=-500', 100), { start: 0, end: 99 });
  assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=9-3', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=0-1,5-6', 100), null);
  assert.equal(parseRange(undefined, 100), null);
  assert.equal(parseRange('items=0-1', 100), null);
});

test('sizes from the general protocol metadata', () => {
  assert.equal(sizeFromResolution('720p', '16:9'), '1280x720');
  assert.equal(sizeFromResolution('1080p', '9:16'), '1080x1920');
  assert.equal(sizeFromResolution('480p', '1:1'), '480x480');
  assert.equal(sizeFromResolution(undefined, undefined), '1280x720');
  assert.equal(normaliseSize('1281x721'), '1280x720');
  assert.equal(normaliseSize('nonsense'), '1280x720');
});
