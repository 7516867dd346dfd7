// The SDK Runtime's options: Core's log lines forwarded to our logger (never to the console), and
// the Prometheus exporter only with --metrics, with buckets for render times in seconds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RENDER_SECONDS_BUCKETS } from '../../../activities/metrics';
import { parseMetricsAddress } from '../../../worker/metrics-address';
import { CORE_LOG_FILTER, isConnectionTrouble, runtimeOptions } from '../../../worker/runtime';

describe('runtimeOptions', () => {
  it("forwards Core's warnings to the logger instead of the console", () => {
    const logging = runtimeOptions().telemetryOptions?.logging;
    assert.deepEqual(logging, { filter: CORE_LOG_FILTER, forward: {} });
    assert.ok(!('console' in (logging ?? {})));
    assert.match(CORE_LOG_FILTER, /temporalio_sdk_core=WARN/);
  });

  it('exports metrics only when asked, on the parsed address, with render-time buckets', () => {
    assert.equal(runtimeOptions().telemetryOptions?.metrics, undefined);
    const metrics = runtimeOptions(parseMetricsAddress('[::1]:9464')).telemetryOptions?.metrics;
    assert.ok(metrics && 'prometheus' in metrics);
    assert.equal(metrics.prometheus.bindAddress, '[::1]:9464');
    assert.deepEqual(metrics.prometheus.histogramBucketOverrides, { reelflow_render_seconds: RENDER_SECONDS_BUCKETS });
  });
});

describe("Core's lines about an unreachable server", () => {
  it("are told apart from Core's other warnings", () => {
    const retried = {
      message: 'gRPC call poll_workflow_task_queue retried 6 times',
      meta: { sdkComponent: 'core', error: 'Status { code: Unavailable, message: "tcp connect error" }' },
    };
    assert.ok(isConnectionTrouble(retried));
    assert.ok(!isConnectionTrouble({ message: 'Workflow task duration exceeded (TMPRL1104)', meta: { sdkComponent: 'core' } }));
    // The SDK's TypeScript side is not Core: its lines are never counted as an outage.
    assert.ok(!isConnectionTrouble({ message: 'transport closed', meta: { sdkComponent: 'worker' } }));
  });
});
