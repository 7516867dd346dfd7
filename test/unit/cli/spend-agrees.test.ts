// One spend, computed once (storage/spend-rows.ts ledger), shown the same by every surface: the
// budget's earlier spend (activities/plan.ts spentBefore), `status` and the end of `run`
// (client/spend.ts spendOf), the worker's metrics (activities/metrics.ts) and `results --format csv`
// (client/paid-rows.ts: every paid run has a row). One scenario: renders, a render replaced after a
// prompt edit, prompt rewrites (in rows, and one `reelflow enhance` paid that no row counts), a
// failed render charged at its estimate, and a row written twice by a repeated recording. Pure logic.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MetricGauge, MetricMeter } from '@temporalio/common';
import { spentBefore } from '../../../activities/plan';
import { ReelflowMetrics } from '../../../activities/metrics';
import type { PlanEstimate } from '../../../client/estimate';
import { withReplacedPaidRows } from '../../../client/paid-rows';
import { spendOf } from '../../../client/spend';
import { toCsv } from '../../../cli/commands/operate';
import { latestRowByKey, type ManifestRow } from '../../../storage/manifest';
import { manifestRow } from '../../support/storage';

const base = (key: string, finished: number, extra: Partial<ManifestRow>): ManifestRow =>
  manifestRow(1, {
    key,
    id: key,
    model: 'seedance',
    prompt: `a ${key}`,
    task_id: `task-${key}-${finished}`,
    base_url: null,
    finished_at: new Date(Date.UTC(2026, 10, 27, 17, finished)).toISOString(),
    ...extra,
  });

const rows: ManifestRow[] = [
  base('shoe', 1, { cost_usd: 0.25, cost_source: 'billed', rewrite_cost_usd: 0.0003, rewrite_cost_source: 'usage', rewrite_at: 'r1' }),
  base('cap', 2, { cost_usd: 0.25, cost_source: 'estimated' }),
  // The failed render: its create reached the gateway, charged at its estimate.
  base('bag', 3, { state: 'failed', cost_usd: 0.25, cost_source: 'estimated', error: { kind: 'render_failed', message: 'x' } }),
  // shoe's description edited: rendered again, the first render replaced but paid.
  base('shoe', 9, {
    prompt: 'a red shoe',
    cost_usd: 0.25,
    cost_source: 'billed',
    rewrite_cost_usd: 0.0004,
    rewrite_cost_source: 'usage',
    rewrite_at: 'r2',
  }),
];
// A recording repeated after a crash appends the same line again: the same run, paid once.
const everyRow = [...rows, rows[1]!];
/** `reelflow enhance`'s call, which no row counts. */
const enhanceCalls = [{ cost_usd: 0.0005, cost_source: 'usage' as const }];

const estimate: PlanEstimate = {
  currency: 'USD',
  total: 0.76,
  per_model: [
    { model: 'seedance', role: 'video', items: 3, priced_items: 3, usd: 0.75, source: 'job file', assumed_seconds: {} },
    { model: 'claude', role: 'enhance', items: 3, priced_items: 3, usd: 0.01, source: 'job file', assumed_seconds: {} },
  ],
  unpriced_items: 0,
  unpriced_models: [],
};

const round = (usd: number) => Math.round(usd * 1e6) / 1e6;
const PAID = round(4 * 0.25 + 0.0003 + 0.0004 + 0.0005);

describe('one spend, the same on every surface', () => {
  it('budget, status, metrics and the results CSV add up to the same ledger', () => {
    assert.equal(spentBefore(everyRow, enhanceCalls), PAID, 'the budget');
    const shown = spendOf(everyRow, estimate, enhanceCalls)!;
    assert.equal(shown.spent_usd, PAID, 'status and the end of run');
    assert.equal(shown.per_model.find((m) => m.model === 'claude')?.usage_usd, 0.0012);

    // The metrics: the rows a worker recorded (enhance's call is no row: docs/costs.md), each once.
    const gauges = new Map<string, number>();
    const meter = {
      createGauge: () =>
        ({ set: (v: number, tags: Record<string, string>) => gauges.set(`${tags.model}/${tags.source}`, v) }) as unknown as MetricGauge,
      createCounter: () => ({ add: () => undefined }),
      createHistogram: () => ({ record: () => undefined }),
      withTags: () => meter,
    } as unknown as MetricMeter;
    const metrics = new ReelflowMetrics(meter, new Map());
    for (const row of rows) metrics.itemEnded(row, 'claude');
    assert.equal(round([...gauges.values()].reduce((a, b) => a + b, 0) + 0.0005), PAID, 'the metrics');

    // results --format csv: the latest row per item and every other paid run, each once.
    const latest = [...latestRowByKey(everyRow).values()];
    const csv = toCsv(withReplacedPaidRows(latest, everyRow)).trim().split('\n');
    const header = csv[0]!.split(',');
    const at = (name: string) => header.indexOf(name);
    const lines = csv.slice(1).map((l) => l.split(','));
    assert.equal(lines.length, 4, 'shoe, cap, bag, and the replaced shoe render');
    assert.deepEqual(
      lines.map((l) => [l[at('key')], l[at('replaced')]]),
      [
        ['shoe', ''],
        ['cap', ''],
        ['bag', ''],
        ['shoe', 'true'],
      ],
    );
    const csvTotal = round(lines.reduce((sum, l) => sum + Number(l[at('total_cost_usd')]), 0));
    assert.equal(round(csvTotal + 0.0005), PAID, 'the results CSV and the stated rewrite spend');
  });
});
