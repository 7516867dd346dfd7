// The size bound of one plan item (jobfile/item-size.ts): what `validate` refuses and where it points.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseJobFile } from '../../../jobfile';
import { MAX_ITEM_BYTES, PLAN_PAGE_BYTES, serializedBytes } from '../../../jobfile/item-size';

function job(items: string[]): string {
  return [
    'version: 1',
    'name: sizes',
    'gateway:',
    '  base_urls: [http://127.0.0.1:9]',
    'defaults:',
    '  model: m',
    'items:',
    ...items,
    '',
  ].join('\n');
}

describe('item size', () => {
  it('lets a page hold at least two of the largest items, far under Temporal 2 MB payload limit', () => {
    assert.ok(2 * MAX_ITEM_BYTES <= PLAN_PAGE_BYTES);
    assert.ok(PLAN_PAGE_BYTES * 2 < 2 * 1024 * 1024);
  });

  it('accepts an item just under the limit and counts UTF-8 bytes, not characters', () => {
    const prompt = 'é'.repeat(60_000); // 120,000 bytes
    const loaded = parseJobFile(job(['  - id: a', `    prompt: "${prompt}"`]), '/tmp/sizes.yaml', { runDate: '2025-01-01' });
    assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
    assert.ok(serializedBytes(loaded.plan.items[0]) > 120_000);
  });

  it('refuses a prompt that makes its item too large, at the prompt, and nothing else', () => {
    const prompt = 'é'.repeat(140_000); // 280,000 bytes, 140,000 characters
    const loaded = parseJobFile(job(['  - id: a', '    prompt: fine', '  - id: b', `    prompt: "${prompt}"`]), '/tmp/sizes.yaml', {
      runDate: '2025-01-01',
    });
    assert.ok(!loaded.ok);
    assert.equal(loaded.errors.length, 1);
    const [error] = loaded.errors;
    assert.equal(error?.line, 11);
    assert.match(error?.message ?? '', /items\[1\]\.prompt: this item is 273\.\d KiB serialized, over the 256 KiB one item may have/);
  });

  it('points at the inline reference that makes its item too large', () => {
    const image = `data:image/png;base64,${'A'.repeat(300_000)}`;
    const loaded = parseJobFile(
      job(['  - id: a', '    prompt: shot', '    references:', '      - image: ./local.png', `      - image: "${image}"`]),
      '/tmp/sizes.yaml',
      { runDate: '2025-01-01', files: { isFile: () => true, realPath: (p) => p, readText: () => new Error('no'), size: () => 10 } },
    );
    assert.ok(!loaded.ok);
    const messages = loaded.errors.map((e) => `${e.line}: ${e.message}`);
    assert.ok(
      messages.some((m) => /^12: items\[0\]\.references\[1\]\.image: .*instead of a data: URL/.test(m)),
      messages.join('\n'),
    );
  });
});
