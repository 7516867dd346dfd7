// reelflow's own metrics, recorded through the Temporal SDK's metric meter: a worker started with
// `--metrics HOST:PORT` exports them on /metrics beside the SDK's `temporal_*` ones (worker/runtime.ts);
// without it the SDK's meter records nothing. Each activity's meter adds its namespace, taskQueue
// and activityType labels. The names and help texts below are what the README documents; the kind
// is what /metrics shows for each before its first event (worker/metrics-baseline.ts).
import { ApplicationFailure, Context } from '@temporalio/activity';
import { noopMetricMeter, type MetricMeter, type MetricTags } from '@temporalio/common';
import { isGatewayError } from '../gateway';
import type { PoolEvent } from '../gateway/pool';
import type { ManifestRow } from '../storage/manifest/row';
import { rowCharges } from '../storage/manifest/spend-rows';

export const METRICS = {
  creates: {
    name: 'reelflow_creates_total',
    kind: 'counter',
    help: 'Video creates, by model and outcome: created, or the failure kind (e.g. ambiguous_create, rate_limited, create_not_sent)',
  },
  checks: {
    name: 'reelflow_status_checks_total',
    kind: 'counter',
    help: 'Task status checks, by outcome: the state the gateway reported (pending, running, succeeded, failed, unknown) or the failure kind',
  },
  failovers: {
    name: 'reelflow_gateway_failovers_total',
    kind: 'counter',
    help: 'Times a failing base address (base_url) handed its traffic to the next healthy one',
  },
  cooldowns: {
    name: 'reelflow_gateway_cooldowns_total',
    kind: 'counter',
    help: 'Times a base address (base_url) was put in cooldown after a connection failure or 5xx; one per back-off step of an outage',
  },
  bytes: {
    name: 'reelflow_downloaded_bytes_total',
    kind: 'counter',
    help: 'Video bytes downloaded into storage (the bytes a resumed download kept are not counted again)',
  },
  items: {
    name: 'reelflow_items_total',
    kind: 'counter',
    help: 'Items that ended, by end state and model, counted when their manifest line is written',
  },
  spend: {
    name: 'reelflow_spend_usd_total',
    kind: 'gauge',
    help: "What the items this worker recorded cost, USD, by model and source: billed (the gateway's figure), usage (a prompt rewrite's tokens at the enhance model's prices) or estimated (the price times the creates that may have been sent; a rewrite's estimate); a float gauge that only grows",
  },
  renderSeconds: {
    name: 'reelflow_render_seconds',
    kind: 'histogram',
    help: 'Seconds from the create to the stored video, for succeeded items, by model',
  },
} as const;

/** Renders take seconds to an hour; the SDK's default buckets are for milliseconds. */
export const RENDER_SECONDS_BUCKETS = [5, 10, 20, 30, 45, 60, 90, 120, 180, 240, 300, 450, 600, 900, 1200, 1800, 3600];

/** Histogram bucket overrides for the Runtime's Prometheus exporter. */
export const HISTOGRAM_BUCKETS: Record<string, number[]> = { [METRICS.renderSeconds.name]: RENDER_SECONDS_BUCKETS };

type CounterName = Exclude<keyof typeof METRICS, 'renderSeconds' | 'spend'>;

/**
 * The spend this process recorded, by model and source. The SDK's counters hold whole numbers (a
 * $0.80 item would add 0), so reelflow_spend_usd_total is a float gauge set to this running sum.
 */
const spentInThisProcess = new Map<string, number>();

/** The recorders, over any meter (unit tests pass one that remembers). */
export class ReelflowMetrics {
  constructor(
    private readonly meter: MetricMeter,
    private readonly spent: Map<string, number> = spentInThisProcess,
  ) {}

  private add(counter: CounterName, value: number, tags: MetricTags = {}): void {
    const { name, help } = METRICS[counter];
    this.meter.createCounter(name, undefined, help).add(value, tags);
  }

  create(model: string, outcome: string): void {
    this.add('creates', 1, { model, outcome });
  }

  check(outcome: string): void {
    this.add('checks', 1, { outcome });
  }

  gatewayEvent(event: PoolEvent): void {
    if (event.type === 'cooldown') this.add('cooldowns', 1, { base_url: event.baseUrl });
    else if (event.type === 'failover') this.add('failovers', 1, { base_url: event.from });
  }

  downloaded(bytes: number): void {
    if (bytes > 0) this.add('bytes', bytes);
  }

  private addSpend(model: string, source: string, usd: number): void {
    const key = `${model}\u0000${source}`;
    const total = Math.round(((this.spent.get(key) ?? 0) + usd) * 1e6) / 1e6;
    this.spent.set(key, total);
    const { name, help } = METRICS.spend;
    this.meter.createGauge(name, 'float', 'USD', help).set(total, { model, source });
  }

  /** `enhanceModel`: the model the row's prompt rewrite (rewrite_cost_usd) was paid to; its spend counts under that name. */
  itemEnded(
    row: Pick<
      ManifestRow,
      'state' | 'model' | 'created_at' | 'finished_at' | 'cost_usd' | 'cost_source' | 'rewrite_cost_usd' | 'rewrite_cost_source'
    >,
    enhanceModel?: string,
  ): void {
    this.add('items', 1, { state: row.state, model: row.model });
    // The row's charges as every spend counts them (storage/manifest/spend-rows.ts); a $0 one adds nothing.
    for (const charge of rowCharges(row, enhanceModel)) if (charge.usd > 0) this.addSpend(charge.model, charge.source, charge.usd);
    const seconds = renderSeconds(row);
    if (seconds !== undefined) {
      const { name, help } = METRICS.renderSeconds;
      this.meter.createHistogram(name, 'float', 's', help).record(seconds, { model: row.model });
    }
  }
}

/** A succeeded item's time from its create to its end; undefined for others and unreadable times. */
export function renderSeconds(row: Pick<ManifestRow, 'state' | 'created_at' | 'finished_at'>): number | undefined {
  if (row.state !== 'succeeded' || !row.created_at) return undefined;
  const ms = Date.parse(row.finished_at) - Date.parse(row.created_at);
  return Number.isFinite(ms) && ms >= 0 ? ms / 1000 : undefined;
}

/** The failure kind an activity reports for `error` (the manifest's error.kind). */
export function outcomeOf(error: unknown): string {
  if (isGatewayError(error)) return error.kind;
  if (error instanceof ApplicationFailure && error.type) return error.type;
  return 'error';
}

/** The current activity's meter; outside an activity (a gateway event with none), nothing is recorded. */
export function metricsHere(): ReelflowMetrics {
  let meter: MetricMeter = noopMetricMeter;
  try {
    meter = Context.current().metricMeter;
  } catch {
    // Not in an activity.
  }
  return new ReelflowMetrics(meter);
}

/** Runs one create and counts it by its outcome. */
export async function countCreate<T>(model: string, create: () => Promise<T>): Promise<T> {
  try {
    const created = await create();
    metricsHere().create(model, 'created');
    return created;
  } catch (error) {
    metricsHere().create(model, outcomeOf(error));
    throw error;
  }
}

/** Runs one status check and counts it by the state it read, or its failure. */
export async function countCheck<T extends { state: string }>(check: () => Promise<T>): Promise<T> {
  try {
    const status = await check();
    metricsHere().check(status.state);
    return status;
  } catch (error) {
    metricsHere().check(outcomeOf(error));
    throw error;
  }
}

/** Counts a download's new bytes from its storage progress (bytes so far, resumed ones included). */
export class DownloadMeter {
  private counted: number;
  private pending = 0;

  /** `startOffset`: the bytes a resumed download already had, not downloaded now. */
  constructor(
    private readonly metrics: ReelflowMetrics,
    startOffset: number,
    private readonly batchBytes = 4 * 1024 * 1024,
  ) {
    this.counted = startOffset;
  }

  progress(bytesSoFar: number): void {
    if (bytesSoFar <= this.counted) return;
    this.pending += bytesSoFar - this.counted;
    this.counted = bytesSoFar;
    // Batched: progress comes per chunk, and a scrape a few MiB behind is still current enough.
    if (this.pending >= this.batchBytes) this.flush();
  }

  flush(): void {
    this.metrics.downloaded(this.pending);
    this.pending = 0;
  }
}
