// reelflow's metric recorders over a meter that remembers what it was given (pure logic; the real
// exporter is exercised by test/e2e/observability.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/activity';
import type { MetricCounter, MetricGauge, MetricHistogram, MetricMeter, MetricTags } from '@temporalio/common';
import { DownloadMeter, METRICS, outcomeOf, ReelflowMetrics, renderSeconds } from '../../../activities/metrics';
import { AmbiguousCreateError, GatewayUnavailableError } from '../../../gateway';

interface Recorded {
  name: string;
  kind: 'counter' | 'histogram' | 'gauge';
  value: number;
  tags: MetricTags;
  help?: string;
}

function rememberingMeter(): { meter: MetricMeter; recorded: Recorded[] } {
  const recorded: Recorded[] = [];
  const meter: MetricMeter = {
    createCounter: (name, _unit, help) =>
      ({
        add: (value: number, tags: MetricTags = {}) => recorded.push({ name, kind: 'counter', value, tags, help }),
      }) as unknown as MetricCounter,
    createHistogram: (name, _type, _unit, help) =>
      ({
        record: (value: number, tags: MetricTags = {}) => recorded.push({ name, kind: 'histogram', value, tags, help }),
      }) as unknown as MetricHistogram,
    createGauge: (name, _type, _unit, help) =>
      ({
        set: (value: number, tags: MetricTags = {}) => recorded.push({ name, kind: 'gauge', value, tags, help }),
      }) as unknown as MetricGauge,
    withTags: () => meter,
  };
  return { meter, recorded };
}

describe('reelflow metrics', () => {
  it('names every metric reelflow_* with a help text, counters ending in _total', () => {
    for (const { name, help } of Object.values(METRICS)) {
      assert.match(name, /^reelflow_[a-z_]+$/);
      assert.ok(help.length > 20, name);
    }
    assert.ok(
      Object.values(METRICS)
        .filter((m) => m.name !== METRICS.renderSeconds.name)
        .every((m) => m.name.endsWith('_total')),
    );
  });

  it('counts creates and checks by outcome, failovers and cooldowns by base address', () => {
    const { meter, recorded } = rememberingMeter();
    const metrics = new ReelflowMetrics(meter);
    metrics.create('seedance', 'created');
    metrics.check('running');
    metrics.gatewayEvent({ type: 'cooldown', baseUrl: 'http://a', cooldownMs: 5000, consecutiveFailures: 1 });
    metrics.gatewayEvent({ type: 'failover', from: 'http://a', to: 'http://b' });
    assert.deepEqual(
      recorded.map(({ name, value, tags }) => ({ name, value, tags })),
      [
        { name: 'reelflow_creates_total', value: 1, tags: { model: 'seedance', outcome: 'created' } },
        { name: 'reelflow_status_checks_total', value: 1, tags: { outcome: 'running' } },
        { name: 'reelflow_gateway_cooldowns_total', value: 1, tags: { base_url: 'http://a' } },
        { name: 'reelflow_gateway_failovers_total', value: 1, tags: { base_url: 'http://a' } },
      ],
    );
    assert.equal(recorded[0]!.help, METRICS.creates.help);
  });

  it('counts an ended item by state and model, and its render time only when it succeeded', () => {
    const { meter, recorded } = rememberingMeter();
    const metrics = new ReelflowMetrics(meter);
    const base = { model: 'veo-3.1-fast-generate-001', created_at: '2026-01-01T00:00:00.000Z', finished_at: '2026-01-01T00:01:30.500Z' };
    metrics.itemEnded({ ...base, state: 'succeeded' });
    metrics.itemEnded({ ...base, state: 'failed' });
    metrics.itemEnded({ ...base, state: 'unknown', created_at: null });
    assert.deepEqual(
      recorded.map(({ name, kind, value, tags }) => ({ name, kind, value, tags })),
      [
        { name: 'reelflow_items_total', kind: 'counter', value: 1, tags: { state: 'succeeded', model: 'veo-3.1-fast-generate-001' } },
        { name: 'reelflow_render_seconds', kind: 'histogram', value: 90.5, tags: { model: 'veo-3.1-fast-generate-001' } },
        { name: 'reelflow_items_total', kind: 'counter', value: 1, tags: { state: 'failed', model: 'veo-3.1-fast-generate-001' } },
        { name: 'reelflow_items_total', kind: 'counter', value: 1, tags: { state: 'unknown', model: 'veo-3.1-fast-generate-001' } },
      ],
    );
    assert.equal(renderSeconds({ state: 'succeeded', created_at: 'garbage', finished_at: base.finished_at }), undefined);
  });

  it('adds what an ended item cost to the spend, by model and where the figure came from', () => {
    const { meter, recorded } = rememberingMeter();
    const metrics = new ReelflowMetrics(meter, new Map());
    const base = { model: 'veo-3.1-fast-generate-001', created_at: null, finished_at: '2026-01-01T00:01:30.500Z' };
    metrics.itemEnded({ ...base, state: 'unknown', cost_usd: 0.8, cost_source: 'estimated' });
    metrics.itemEnded({ ...base, state: 'failed', cost_usd: 0, cost_source: 'estimated' });
    metrics.itemEnded({ ...base, state: 'failed' });
    metrics.itemEnded({ ...base, state: 'succeeded', cost_usd: 0.4, cost_source: 'estimated' });
    metrics.itemEnded({ ...base, state: 'succeeded', cost_usd: 0.3, cost_source: 'billed' });
    const spend = recorded.filter((r) => r.name === 'reelflow_spend_usd_total');
    // The SDK's counters hold whole numbers: a float gauge carries the running sum.
    assert.deepEqual(
      spend.map(({ kind, value, tags }) => ({ kind, value, tags })),
      [
        { kind: 'gauge', value: 0.8, tags: { model: 'veo-3.1-fast-generate-001', source: 'estimated' } },
        { kind: 'gauge', value: 1.2, tags: { model: 'veo-3.1-fast-generate-001', source: 'estimated' } },
        { kind: 'gauge', value: 0.3, tags: { model: 'veo-3.1-fast-generate-001', source: 'billed' } },
      ],
    );
    assert.equal(spend[0]!.help, METRICS.spend.help);
  });

  it("adds an item's prompt rewrite to the spend under the enhance model's name, with its source", () => {
    const { meter, recorded } = rememberingMeter();
    const metrics = new ReelflowMetrics(meter, new Map());
    const base = {
      model: 'veo-3.1-fast-generate-001',
      created_at: null,
      finished_at: '2026-01-01T00:01:30.500Z',
      state: 'succeeded' as const,
    };
    metrics.itemEnded(
      { ...base, cost_usd: 0.4, cost_source: 'billed', rewrite_cost_usd: 0.000171, rewrite_cost_source: 'usage' },
      'claude-sonnet-4-6',
    );
    metrics.itemEnded({ ...base, rewrite_cost_usd: 0.000229, rewrite_cost_source: 'usage' }, 'claude-sonnet-4-6');
    // A row from before rewrite_cost_source: an estimate.
    metrics.itemEnded({ ...base, rewrite_cost_usd: 0.0063 }, 'claude-sonnet-4-6');
    // A stored rewrite reused: the row records none, nothing is added.
    metrics.itemEnded(base, 'claude-sonnet-4-6');
    const spend = recorded.filter((r) => r.name === 'reelflow_spend_usd_total');
    assert.deepEqual(
      spend.map(({ value, tags }) => ({ value, tags })),
      [
        { value: 0.4, tags: { model: 'veo-3.1-fast-generate-001', source: 'billed' } },
        { value: 0.000171, tags: { model: 'claude-sonnet-4-6', source: 'usage' } },
        { value: 0.0004, tags: { model: 'claude-sonnet-4-6', source: 'usage' } },
        { value: 0.0063, tags: { model: 'claude-sonnet-4-6', source: 'estimated' } },
      ],
    );
  });

  it('counts only the bytes a download brings, batched, and all of them once it ends', () => {
    const { meter, recorded } = rememberingMeter();
    // A resumed download that already had 1000 bytes: progress reports bytes so far, those included.
    const download = new DownloadMeter(new ReelflowMetrics(meter), 1000, 500);
    download.progress(1200);
    assert.equal(recorded.length, 0, 'below the batch: not yet');
    download.progress(1600);
    download.progress(1600);
    download.progress(1700);
    download.flush();
    download.flush();
    assert.deepEqual(
      recorded.map((r) => r.value),
      [600, 100],
    );
    assert.ok(recorded.every((r) => r.name === 'reelflow_downloaded_bytes_total'));
  });

  it('names an outcome by the failure kind the manifest uses', () => {
    assert.equal(outcomeOf(new AmbiguousCreateError('maybe sent')), 'ambiguous_create');
    assert.equal(outcomeOf(new GatewayUnavailableError('down')), 'gateway_unavailable');
    assert.equal(outcomeOf(ApplicationFailure.create({ type: 'create_not_sent', message: 'x' })), 'create_not_sent');
    assert.equal(outcomeOf(new Error('anything else')), 'error');
  });
});
