// The results table within the terminal's width, and the rows `--state`, `--model` and `--id` keep.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rowFilter, toCsv, toTable } from '../../../cli/commands/operate';
import { UsageError } from '../../../cli/errors';
import { displayWidth } from '../../../client/terminal-text';
import { manifestRow } from '../../support/storage';

const litellmTask = `video_${'a1b2c3'.repeat(21)}`; // LiteLLM's task ids are about 130 characters
const rows = [
  manifestRow(1, {
    key: 'a-rather-long-item-key-from-a-csv-row-17',
    model: 'seedance-1-0-pro-250528',
    task_id: litellmTask,
    base_url: 'http://gateway-number-one.internal.example:4000',
    file: '001-a-rather-long-item-key-from-a-csv-row-17.mp4',
    bytes: 1_234_567,
    sha256: 'ab'.repeat(32),
  }),
  manifestRow(2, {
    key: 'k2',
    state: 'failed',
    model: 'veo-3.1-fast-generate-001',
    task_id: 'task-2',
    file: null,
    bytes: null,
    sha256: null,
    error: { kind: 'render_failed', message: 'the content policy refused the prompt' },
  }),
  manifestRow(3, {
    key: 'k3',
    state: 'unknown',
    model: 'veo-3.1-fast-generate-001',
    id: 'third',
    error: { kind: 'ambiguous_create', message: 'no answer' },
  }),
];

describe('results table', () => {
  it('fits 100 columns: long keys, models, task ids and files are cut, the error is whole', () => {
    const text = toTable(rows, 0, 100);
    const lines = text.trimEnd().split('\n');
    for (const line of lines) assert.ok(displayWidth(line) <= 100, `${displayWidth(line)} columns: ${line}`);
    // An error too long for the rest of its row follows it, whole.
    assert.match(text, /\n#2 +k2 +failed +veo-3\.1-f… .*\n +error: +render_failed: the content policy refused the prompt\n/);
    assert.match(text, /\n#3 +k3 +unknown +veo-3\.1-f… .* ambiguous_create: no answer\n/);
    assert.match(lines[1]!, /video_a1b…/);
    assert.ok(!lines.join('\n').includes(litellmTask));
  });

  it('a wide terminal also shows polls, base address and sha256', () => {
    const text = toTable(rows, 0, 300);
    assert.match(text.split('\n')[0]!, /POLLS .*BASE .*SHA256 .*ERROR/);
    assert.ok(text.includes('http://gateway-number-one.internal.exam…'), text);
    assert.ok(text.includes(litellmTask.slice(0, 30)));
  });

  it('shows what each take cost once a row records it, and its pick beside its state', () => {
    const priced = [
      { ...rows[0]!, cost_usd: 0.4, cost_source: 'billed' as const, pick: 'keep' as const },
      { ...rows[1]!, cost_usd: 0.04, cost_source: 'estimated' as const },
    ];
    const text = toTable(priced, 0, 100);
    assert.match(text.split('\n')[0]!, /SIZE +COST/);
    assert.match(text, /\n#1 .*succeeded, kept .*\$0\.40 billed/);
    assert.match(text, /\n#2 .*\$0\.04 est\./);
    for (const line of text.trimEnd().split('\n')) assert.ok(displayWidth(line) <= 100, line);
    assert.doesNotMatch(toTable(rows, 0, 100), /COST/, 'no cost recorded: no column');
  });

  it("counts an item's prompt rewrite in its COST, and shows the rewrite's part beside it", () => {
    const priced = [
      { ...rows[0]!, cost_usd: 0.4, cost_source: 'billed' as const, rewrite_cost_usd: 0.0017, rewrite_cost_source: 'usage' as const },
      // Failed before its create was sent: what it cost is its rewrite alone.
      { ...rows[1]!, rewrite_cost_usd: 0.0063, rewrite_cost_source: 'estimated' as const },
      { ...rows[2]!, cost_usd: 0.04, cost_source: 'estimated' as const },
    ];
    const text = toTable(priced, 0, 120);
    assert.match(text.split('\n')[0]!, /SIZE +COST +REWRITE/);
    assert.match(text, /\n#1 .*\$0\.40 billed +\$0\.0017 usage/);
    assert.match(text, /\n#2 .*\$0\.0063 est\. +\$0\.0063 est\./);
    assert.match(text, /\n#3 .*\$0\.04 est\. +-\n/);
    for (const line of text.trimEnd().split('\n')) assert.ok(displayWidth(line) <= 120, line);
    assert.doesNotMatch(toTable([{ ...rows[0]!, cost_usd: 0.4, cost_source: 'billed' as const }], 0, 120), /REWRITE/);

    const csv = toCsv(priced).split('\n');
    assert.match(csv[0]!, /,cost_usd,cost_source,rewrite_cost_usd,rewrite_cost_source,total_cost_usd$/);
    assert.match(csv[1]!, /,0\.4,billed,0\.0017,usage,0\.4017$/);
    assert.match(csv[2]!, /,,,0\.0063,estimated,0\.0063$/);
  });

  it('stays within 60 columns', () => {
    for (const line of toTable(rows, 2, 60).trimEnd().split('\n')) assert.ok(displayWidth(line) <= 60, line);
  });
});

describe('results filters', () => {
  const keys = (filter: Parameters<typeof rowFilter>[0]) => rows.filter(rowFilter(filter)).map((r) => r.index);
  it('keeps every row without a filter', () => assert.deepEqual(keys({}), [1, 2, 3]));
  it('--state: one or more end states', () => {
    assert.deepEqual(keys({ state: 'failed' }), [2]);
    assert.deepEqual(keys({ state: 'failed,unknown' }), [2, 3]);
  });
  it('--model and --id (an item id or key), combined', () => {
    assert.deepEqual(keys({ model: 'veo-3.1-fast-generate-001' }), [2, 3]);
    assert.deepEqual(keys({ id: 'third' }), [3]);
    assert.deepEqual(keys({ id: 'k2, a-rather-long-item-key-from-a-csv-row-17' }), [1, 2]);
    assert.deepEqual(keys({ model: 'veo-3.1-fast-generate-001', state: 'unknown' }), [3]);
  });
  it('an unknown state is bad usage that names the states', () => {
    assert.throws(
      () => rowFilter({ state: 'faild' }),
      (e: unknown) => e instanceof UsageError && /succeeded, failed/.test(e.message),
    );
  });
});
