import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backgroundColour, caption, charsPerLine, labelBox, lookFilter, lookHash, seedOf } from '../../../sim/video-look';

const base = { prompt: 'a red fox', seconds: 5, size: '1280x720' };

test('seedOf: numbers and strings from metadata, control characters dropped, bounded; none otherwise', () => {
  assert.equal(seedOf({ seed: 42 }), '42');
  assert.equal(seedOf({ seed: 'abc\u0000\ndef' }), 'abc  def');
  assert.equal(seedOf({ seed: 'x'.repeat(100) })?.length, 40);
  assert.equal(seedOf({ seed: { nested: 1 } }), undefined);
  assert.equal(seedOf({ seed: '  ' }), undefined);
  assert.equal(seedOf(undefined), undefined);
});

test('lookHash: prompt and seed decide it; size and seconds do not', () => {
  assert.equal(lookHash(base), lookHash({ ...base, size: '720x1280', seconds: 3 }));
  assert.notEqual(lookHash(base), lookHash({ ...base, prompt: 'a red fox.' }));
  assert.notEqual(lookHash(base), lookHash({ ...base, seed: '1' }));
  // Prompt and seed never run into each other, whatever they hold.
  assert.notEqual(lookHash({ ...base, prompt: 'ab', seed: 'c' }), lookHash({ ...base, prompt: 'a', seed: 'bc' }));
  assert.notEqual(lookHash({ ...base, prompt: 'a\u0000b' }), lookHash({ ...base, prompt: 'a', seed: 'b' }));
});

test('backgroundColour: a 0xRRGGBB colour dark enough for white text, varying with the hash', () => {
  const colours = ['a', 'b', 'c', 'd', 'e'].map((p) => backgroundColour(lookHash({ ...base, prompt: p })));
  for (const c of colours) {
    assert.match(c, /^0x[0-9a-f]{6}$/);
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(c.slice(1 + i, 3 + i), 16)) as [number, number, number];
    assert.ok(0.2126 * r + 0.7152 * g + 0.0722 * b < 150, `${c} is dark enough`);
  }
  assert.equal(new Set(colours).size, colours.length);
});

test('caption: first words wrapped to the width, cut with an ellipsis, then seed, size and seconds', () => {
  const long = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen';
  const text = caption({ ...base, prompt: long, seed: '7' }, 20);
  const lines = text.split('\n');
  assert.ok(lines.slice(0, -1).every((l) => l.length <= 22));
  assert.match(lines[lines.length - 2] as string, /…$/);
  assert.ok(!text.includes('thirteen'));
  assert.equal(lines[lines.length - 1], 'seed 7 · 1280x720 · 5 s');
  assert.equal(caption({ ...base, prompt: 'tab\there\u0007bell' }, 40), 'tab here bell\nno seed · 1280x720 · 5 s');
  // A word longer than a line is cut rather than overflowing the frame.
  assert.equal(caption({ ...base, prompt: 'x'.repeat(50) }, 10).split('\n')[0], `${'x'.repeat(9)}…`);
});

test('charsPerLine: fewer characters on a portrait frame than on a landscape one', () => {
  assert.ok(charsPerLine('720x1280') < charsPerLine('1280x720'));
  assert.ok(charsPerLine('16x16') >= 8);
});

test('lookFilter: the text comes from a file, never from the prompt inside the filter graph', () => {
  const prompt = "it's: a [weird], prompt; with %{pts} and \\ too";
  const withText = lookFilter({ ...base, prompt }, lookHash({ ...base, prompt }), 'caption.txt');
  assert.match(withText, /^color=c=0x[0-9a-f]{6}:size=1280x720:rate=12,/);
  assert.match(withText, /drawtext=textfile=caption\.txt:expansion=none:/);
  assert.ok(!withText.includes('weird'));
  assert.ok(!lookFilter(base, lookHash(base), null).includes('drawtext'));
});

test('labelBox: a whole free box naming the request', () => {
  const box = labelBox({ ...base, seed: '3' }, lookHash(base));
  assert.equal(box.readUInt32BE(0), box.length);
  assert.equal(box.subarray(4, 8).toString('latin1'), 'free');
  assert.match(box.toString('utf8'), /1280x720, 5 s, seed 3/);
});
