// The side-by-side view of `reelflow enhance` (cli/commands/enhance.ts) and the wrapping under it:
// every line within the terminal's width, gateway text made inert, wide characters counted as two.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sideBySide } from '../../../cli/commands/enhance';
import type { ItemRewrite } from '../../../client/enhance';
import { displayWidth, wrapToWidth } from '../../../client/terminal-text';
import type { PlanItem } from '../../../jobfile/plan';

function item(index: number, prompt: string): PlanItem {
  return {
    key: `k${index}`,
    index,
    outputName: `${index}`,
    request: { model: 'm', protocol: 'general', prompt } as PlanItem['request'],
  };
}

describe('wrapToWidth', () => {
  it('breaks at spaces, inside words only when a word is wider than the line, and counts wide characters as two', () => {
    assert.deepEqual(wrapToWidth('a quiet harbour at dawn', 10), ['a quiet', 'harbour at', 'dawn']);
    assert.deepEqual(wrapToWidth('abcdefghijkl', 5), ['abcde', 'fghij', 'kl']);
    assert.deepEqual(wrapToWidth('東京の雨', 5), ['東京', 'の雨']);
    assert.deepEqual(wrapToWidth('', 5), ['']);
    assert.deepEqual(wrapToWidth('line\nbreak\tand \u001b[2Jescape', 40), ['line break and escape']);
  });
});

describe('sideBySide', () => {
  const rewrites: ItemRewrite[] = [
    {
      item: item(1, 'a lighthouse at dawn, gulls circling above the lamp room'),
      reused: false,
      record: {
        v: 1,
        key: 'k1',
        prompt_sha256: '0'.repeat(64),
        settings_sha256: '0'.repeat(64),
        rewrite: 'a lighthouse at dawn. Cinematic lighting, \u001b]0;title\u0007shallow depth of field, slow dolly-in',
        model: 'm',
        at: '2026-01-01T00:00:00.000Z',
      },
    },
    { item: item(2, 'rain'), reused: false, error: { kind: 'invalid_request', message: 'too long' } },
    {
      item: item(3, 'quiet'),
      reused: true,
      record: { v: 1, key: 'k3', prompt_sha256: '', settings_sha256: '', rewrite: null, model: 'm', at: 'then' },
    },
  ];

  for (const columns of [40, 80, 123]) {
    it(`keeps every line within ${columns} columns`, () => {
      const lines = sideBySide(rewrites, columns);
      for (const line of lines) assert.ok(displayWidth(line) <= columns, `${displayWidth(line)}: ${line}`);
      assert.match(lines[0]!, /^PROMPT +│ REWRITE$/);
      assert.ok(
        lines.every((l) => !l.includes('\u001b')),
        'no escape from the gateway reaches the terminal',
      );
    });
  }

  it('names each item and how its rewrite came, and says what happens without one', () => {
    const text = sideBySide(rewrites, 100).join('\n');
    assert.match(
      text,
      /#1 k1 \(asked now\)\na lighthouse at dawn, gulls circling above the +│ a lighthouse at dawn\. Cinematic lighting, shallow/,
    );
    assert.match(text, /#2 k2 \(no rewrite\)\nrain +│ error: invalid_request: too long/);
    assert.match(text, /#3 k3 \(stored then\)\nquiet +│ \(the gateway answered no text: the prompt is/);
  });
});
