// The review page's arrangement (review/report/layout.ts): the fallbacks for rows written before takes
// existed, one row per prompt with its takes in take order, each row's label, and each tile's
// aspect ratio.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ManifestRow } from '../../../storage/manifest';
import { aspectOf, promptOf, promptRows, parseRatio, ratioText, sourceOf, takeOf, varValues } from '../../../review/report/layout';
import { renderPromptRow, renderTile } from '../../../review/report/template';
import { manifestRow } from '../../support/storage';

const row = (index: number, fields: Partial<ManifestRow> = {}): ManifestRow =>
  manifestRow(index, { model: 'm', prompt: `p${index}`, base_url: null, file: `${index}.mp4`, bytes: 10, ...fields });

void describe('review layout', () => {
  void it('falls back to the take its key names, and to the row s own key for its prompt', () => {
    assert.equal(takeOf(row(1)), 1);
    assert.equal(takeOf(row(1, { take: 3 })), 3);
    assert.equal(takeOf(row(1, { take: 0 })), 1);
    assert.equal(takeOf(row(1, { key: 'shoe.16-9~t4' })), 4);
    assert.equal(promptOf(row(1)), 'k1');
    assert.equal(promptOf(row(1, { key: 'shoe.16-9~t2' })), 'shoe.16-9');
    assert.equal(sourceOf(row(1, { id: null, key: 'abc' })), 'abc');
    assert.equal(sourceOf(row(1, { id: null, group: 'g1' })), 'g1');
  });

  void it('one row per prompt (item and matrix combination), in job order, its takes in take order', () => {
    // An item with an id in a matrix, three takes each, finished out of order (the issue's 1, 3, 2):
    // the expansion gives such rows no `group` (jobfile/expand.ts), and each prompt still gets one row.
    const take = (index: number, key: string, n: number, ratio: string, fields: Partial<ManifestRow> = {}) =>
      row(index, { key, id: 'shoe', take: n, vars: { ratio, product: 'shoe' }, ...fields });
    const rows = [
      take(1, 'shoe.16-9', 1, '16:9'),
      take(1, 'shoe.16-9~t3', 3, '16:9'),
      take(2, 'shoe.9-16~t2', 2, '9:16'),
      take(1, 'shoe.16-9~t2', 2, '16:9'),
      take(2, 'shoe.9-16', 1, '9:16'),
      row(3, { key: 'hat', id: 'hat', vars: { product: 'hat' } }),
      take(2, 'shoe.9-16~t3', 3, '9:16'),
    ];
    const shown = promptRows(rows);
    assert.deepEqual(
      shown.map((r) => [r.prompt, r.values, r.takes.map((t) => t.row.key)]),
      [
        ['shoe.16-9', [['ratio', '16:9']], ['shoe.16-9', 'shoe.16-9~t2', 'shoe.16-9~t3']],
        ['shoe.9-16', [['ratio', '9:16']], ['shoe.9-16', 'shoe.9-16~t2', 'shoe.9-16~t3']],
        ['hat', [], ['hat']],
      ],
      'the values that tell the rows of one item apart, and none that they share',
    );
    assert.deepEqual(
      [...varValues(rows).entries()],
      [
        ['product', ['shoe', 'hat']],
        ['ratio', ['16:9', '9:16']],
      ],
    );
  });

  void it('gives each tile its video s own aspect ratio: measured, else asked, else 16:9', () => {
    assert.equal(parseRatio('9:16'), 9 / 16);
    assert.equal(parseRatio('wide'), undefined);
    assert.equal(aspectOf(row(1, { ratio: '9:16' }), undefined), 9 / 16);
    assert.equal(aspectOf(row(1), { width: 480, height: 480 }), 1);
    assert.equal(aspectOf(row(1, { ratio: '16:9' }), { width: 720, height: 1280 }), 720 / 1280);
    assert.equal(aspectOf(row(1), undefined), 16 / 9);
    assert.equal(aspectOf(row(1), { width: 10_000, height: 10 }), 4, 'clamped');
    assert.equal(ratioText(1280, 720), '16:9');
    assert.equal(ratioText(854, 480), '16:9');
    assert.equal(ratioText(480, 480), '1:1');
  });

  void it('labels a tile with its take, and its details, all escaped', () => {
    const html = renderTile(
      row(1, {
        take: 2,
        ratio: '9:16',
        resolution: '720x1280',
        seconds: 4,
        vars: { ratio: '9:16', mood: '<b>calm</b>' },
        cost_usd: 0.4,
        cost_source: 'billed',
      }),
      { media: new Map([['1.mp4', { exists: true, poster: 'posters/1.mp4.jpg' }]]), ffmpeg: true },
    );
    assert.match(html, /<div class="cap"><b>take 2<\/b><\/div>/);
    assert.match(html, /data-take="2"/);
    assert.match(html, /style="--ar:0\.5625"/);
    const info = JSON.parse(
      /data-info="([^"]*)"/
        .exec(html)![1]!
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&'),
    ) as {
      facts: Array<[string, string]>;
    };
    const facts = new Map(info.facts);
    assert.equal(facts.get('values'), 'ratio=9:16, mood=<b>calm</b>');
    assert.equal(facts.get('resolution'), '720x1280');
    assert.equal(facts.get('cost'), '$0.40 (billed)');
    assert.equal(facts.get('task id'), 't1');
    assert.ok(!html.includes('<b>calm'), 'escaped');
  });

  void it('labels a row by its id and values, escaped', () => {
    const rows = [
      row(1, { key: 'a.x', id: 'a<1>', vars: { mood: '<b>calm</b>' } }),
      row(2, { key: 'a.y', id: 'a<1>', vars: { mood: 'bold' } }),
    ];
    const html = renderPromptRow(promptRows(rows)[0]!, { media: new Map(), ffmpeg: true });
    assert.match(html, /<b class="gid" title="a.x">a&lt;1&gt;<\/b><span class="chip var" title="mood">&lt;b&gt;calm&lt;\/b&gt;<\/span>/);
  });

  void it('shows a failed take s reason on its tile', () => {
    const html = renderTile(row(1, { state: 'failed', file: null, error: { kind: 'content_policy', message: 'no <way>' } }), {
      media: new Map(),
      ffmpeg: true,
    });
    assert.match(html, /<span class="why">content_policy: no &lt;way&gt;<\/span>/);
    assert.ok(!html.includes('data-video'));
  });
});
