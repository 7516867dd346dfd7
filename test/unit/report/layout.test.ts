// The review page's arrangement (cli/report/layout.ts): the fallbacks for rows written before takes
// existed, grouping and order of takes, and each tile's aspect ratio.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ManifestRow } from '../../../storage/manifest';
import { aspectOf, groupOf, groupTakes, parseRatio, ratioText, takeOf, varValues } from '../../../cli/report/layout';
import { renderTile } from '../../../cli/report/template';
import { manifestRow } from '../../support/storage';

const row = (index: number, fields: Partial<ManifestRow> = {}): ManifestRow =>
  manifestRow(index, { model: 'm', prompt: `p${index}`, base_url: null, file: `${index}.mp4`, bytes: 10, ...fields });

void describe('review layout', () => {
  void it('falls back to take 1 and the row s own key for rows without take or group', () => {
    assert.equal(takeOf(row(1)), 1);
    assert.equal(takeOf(row(1, { take: 3 })), 3);
    assert.equal(takeOf(row(1, { take: 0 })), 1);
    assert.equal(groupOf(row(1)), 'k1');
    assert.equal(groupOf(row(1, { group: 'shoe' })), 'shoe');
  });

  void it('groups takes by source item, in item order, sorted by matrix value, model and take', () => {
    const rows = [
      row(1, { group: 'b', take: 2, vars: { ratio: '16:9' } }),
      row(2, { group: 'a', take: 1, vars: { ratio: '9:16' } }),
      row(3, { group: 'b', take: 1, vars: { ratio: '16:9' } }),
      row(4, { group: 'a', take: 1, vars: { ratio: '16:9' } }),
      row(5),
      // A later row of key k3 replaces the first one.
      row(3, { group: 'b', take: 1, vars: { ratio: '16:9' }, state: 'failed' }),
    ];
    const groups = groupTakes(rows);
    assert.deepEqual(
      groups.map((g) => [g.group, g.rows.map((r) => r.key)]),
      [
        ['b', ['k3', 'k1']],
        ['a', ['k4', 'k2']],
        ['k5', ['k5']],
      ],
    );
    assert.equal(groups[0]?.rows[0]?.state, 'failed');
    assert.deepEqual([...varValues(rows).entries()], [['ratio', ['16:9', '9:16']]]);
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

  void it('labels a tile with ratio, model, matrix values and take, all escaped', () => {
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
    assert.match(
      html,
      /<span class="chip ratio">9:16<\/span><span class="chip model">m<\/span><span class="chip var" title="mood">&lt;b&gt;calm&lt;\/b&gt;<\/span>/,
    );
    assert.match(html, /take 2/);
    assert.match(html, /style="--ar:0\.5625"/);
    assert.match(html, /<dt>resolution<\/dt><dd>720x1280<\/dd>/);
    assert.match(html, /<dt>cost<\/dt><dd>\$0\.40 \(billed\)<\/dd>/);
    assert.match(html, /<dt>task id<\/dt><dd><code>t1<\/code><\/dd>/);
    assert.ok(!html.includes('<b>calm'), 'escaped');
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
