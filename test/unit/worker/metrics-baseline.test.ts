// worker/metrics-baseline.ts: every reelflow_* family gets its zero series, inside the exporter's
// block when there is one, once, and escaped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { METRICS, RENDER_SECONDS_BUCKETS } from '../../../activities/metrics';
import { withBaseline } from '../../../worker/metrics-baseline';

const LABELS = { taskQueue: 'reelflow', namespace: 'default' };
const BASE = '{namespace="default",taskQueue="reelflow"}';

describe('withBaseline', () => {
  it('adds each family, with its HELP and TYPE, to an exposition that has none of them', () => {
    const text = withBaseline('# HELP temporal_x x\n# TYPE temporal_x counter\ntemporal_x{a="b"} 3\n', LABELS);
    assert.ok(text.startsWith('# HELP temporal_x x\n# TYPE temporal_x counter\ntemporal_x{a="b"} 3\n'));
    assert.ok(text.endsWith('\n'));
    for (const metric of Object.values(METRICS)) {
      assert.match(text, new RegExp(`^# TYPE ${metric.name} ${metric.kind}$`, 'm'));
      assert.equal(text.split('\n').filter((l) => l.startsWith(`# HELP ${metric.name} `)).length, 1);
    }
    assert.match(text, new RegExp(`^reelflow_creates_total\\${BASE} 0$`, 'm'));
    assert.match(text, new RegExp(`^reelflow_spend_usd_total\\${BASE} 0$`, 'm'));
    const buckets = text.split('\n').filter((l) => l.startsWith('reelflow_render_seconds_bucket'));
    assert.equal(buckets.length, RENDER_SECONDS_BUCKETS.length + 1);
    assert.equal(buckets.at(-1), 'reelflow_render_seconds_bucket{namespace="default",taskQueue="reelflow",le="+Inf"} 0');
    assert.match(text, new RegExp(`^reelflow_render_seconds_count\\${BASE} 0$`, 'm'));
    assert.match(text, new RegExp(`^reelflow_render_seconds_sum\\${BASE} 0$`, 'm'));
  });

  it("puts the baseline inside a family the exporter shows, after its series, and keeps the exporter's values", () => {
    const exporter = [
      '# HELP reelflow_items_total Items that ended',
      '# TYPE reelflow_items_total counter',
      'reelflow_items_total{activityType="recordItem",model="m",namespace="default",state="succeeded",taskQueue="reelflow"} 4',
      '# HELP temporal_y y',
      '# TYPE temporal_y gauge',
      'temporal_y 1',
      '',
    ].join('\n');
    const lines = withBaseline(exporter, LABELS).split('\n');
    assert.deepEqual(lines.slice(0, 6), [
      '# HELP reelflow_items_total Items that ended',
      '# TYPE reelflow_items_total counter',
      'reelflow_items_total{activityType="recordItem",model="m",namespace="default",state="succeeded",taskQueue="reelflow"} 4',
      `reelflow_items_total${BASE} 0`,
      '# HELP temporal_y y',
      '# TYPE temporal_y gauge',
    ]);
    assert.equal(lines.filter((l) => l.startsWith('# TYPE reelflow_items_total')).length, 1);
  });

  it('does not add a second series with the same labels', () => {
    const exporter = `# HELP reelflow_downloaded_bytes_total b\n# TYPE reelflow_downloaded_bytes_total counter\nreelflow_downloaded_bytes_total${BASE} 512\n`;
    const text = withBaseline(exporter, LABELS);
    const series = text.split('\n').filter((l) => l.startsWith('reelflow_downloaded_bytes_total{'));
    assert.deepEqual(series, [`reelflow_downloaded_bytes_total${BASE} 512`]);
  });

  it('escapes label values', () => {
    const text = withBaseline('', { namespace: 'a"b\\c', taskQueue: 'q\nr' });
    assert.ok(text.startsWith('# HELP '), 'nothing before the first family');
    assert.ok(text.includes('\nreelflow_downloaded_bytes_total{namespace="a\\"b\\\\c",taskQueue="q\\nr"} 0\n'), text);
  });
});
