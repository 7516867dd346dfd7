// Activity proxies, declared once with their timeouts and retry policies.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { JobSettings } from '../jobfile/plan';
import type * as activities from '../activities/definitions';

/** Pure bookkeeping on the worker: plan pages. Safe to retry. */
export const bookkeeping = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
});

/**
 * Manifest lines as local activities: one marker event instead of a server round trip. Repeating
 * one after a crash appends the same final line again, which readers (latest row per key) absorb.
 */
export const recording = proxyLocalActivities<typeof activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 20 },
});

// Which failures are final is decided once, by each gateway error class (`retryable`), and carried
// as ApplicationFailure.nonRetryable by activities/failures.ts: no list of type names here.

/** Gateway calls whose timeouts follow the job's request_timeout. */
export function gatewayActivities(settings: JobSettings) {
  const perCall = settings.gateway.requestTimeoutMs;
  const createOptions = { startToCloseTimeout: perCall * 4 + 30_000, retry: { maximumAttempts: 1 } };
  return {
    // Creation is the one non-idempotent call: a single Temporal attempt. The gateway client
    // retries inside it only where the protocol says a retry is safe (protocol page, section 6).
    // createTaskMarked's heartbeat timeout finds a create that never started (a task lost on its way
    // to a worker, a worker gone) in seconds; such a create sent nothing and is made again
    // (createWithPolicy). createTask is for workflows from before the marker.
    create: proxyActivities<typeof activities>(createOptions),
    createMarked: proxyActivities<typeof activities>({ ...createOptions, heartbeatTimeout: 20_000 }),
    // Status checks are read-only, so they run as local activities: most of a render's events
    // were check round trips, and the history server is what limits throughput.
    check: proxyLocalActivities<typeof activities>({
      startToCloseTimeout: perCall * 3 + 10_000,
      retry: { initialInterval: '2s', maximumInterval: '30s', maximumAttempts: 8 },
    }),
    enhance: proxyActivities<typeof activities>({
      startToCloseTimeout: perCall * 3 + 30_000,
      retry: { initialInterval: '2s', maximumInterval: '30s', maximumAttempts: 5 },
    }),
    download: proxyActivities<typeof activities>({
      startToCloseTimeout: '2 hours',
      heartbeatTimeout: Math.max(perCall, 30_000),
      retry: {
        initialInterval: '2s', maximumInterval: '1 minute',
        maximumAttempts: Math.max(1, settings.retries.download),
      },
    }),
  };
}
