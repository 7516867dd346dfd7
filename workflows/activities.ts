// Activity proxies, declared once with their timeouts and retry policies.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { CallBudgetsMs, JobSettings } from '../jobfile/plan';
import type * as activities from '../activities/definitions';

/** Pure bookkeeping on the worker: plan pages. Safe to retry. */
export const bookkeeping = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
});

/**
 * Films (activities/assemble.ts): ffmpeg over a job's clips, minutes for long films. The heartbeat
 * finds a worker gone; a retry is safe (the film lands whole or not at all). A film refused for its
 * clips fails at once (nonRetryable).
 */
export const filmMaking = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5s', maximumInterval: '1 minute', maximumAttempts: 3 },
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

/**
 * A status check's time as a local activity: well inside the default 10 s workflow task timeout, and
 * far more than a healthy gateway needs to answer one.
 */
const QUICK_CHECK_MS = 5_000;

/** The worker's own part of a gateway activity around its call: the create marker's round trip, opening files, the client. */
const ACTIVITY_OVERHEAD_MS = 10_000;

/**
 * Settings planned before the budgets existed: the timeout those jobs' activities always had
 * (one 120 s call deadline, a 10 s connect, one request timeout, 10 s to spare).
 */
function plannedBefore(settings: JobSettings): CallBudgetsMs {
  const call = settings.gateway.requestTimeoutMs + 140_000 - ACTIVITY_OVERHEAD_MS;
  return { create: call, status: call, message: call };
}

/**
 * Gateway calls. Each activity gets the worst case of one call of its kind (gateway/budget.ts,
 * docs/limits.md), which the worker computed when it planned the job: for a create, from the
 * largest body the job's requests may send. Temporal cutting a call sooner than the gateway's own
 * bound ended a create that was still legitimately sending `unknown`. Its Temporal attempts
 * multiply the requests: a status check 3 x, a prompt rewrite 2 x one call's.
 */
export function gatewayActivities(settings: JobSettings) {
  const budget = settings.gateway.callBudgetMs ?? plannedBefore(settings);
  const timeout = (kind: keyof CallBudgetsMs) => budget[kind] + ACTIVITY_OVERHEAD_MS;
  const createOptions = { startToCloseTimeout: timeout('create'), retry: { maximumAttempts: 1 } };
  return {
    // Creation is the one non-idempotent call: a single Temporal attempt. The gateway client
    // retries inside it only where the protocol says a retry is safe (docs/protocol.md §6).
    // createTaskMarked's heartbeat timeout finds a create that never started (a task lost on its way
    // to a worker, a worker gone) in seconds; such a create sent nothing and is made again
    // (createWithPolicy). createTask is for workflows from before the marker.
    create: proxyActivities<typeof activities>(createOptions),
    createMarked: proxyActivities<typeof activities>({ ...createOptions, heartbeatTimeout: 20_000 }),
    // Status checks are read-only, so they run as local activities: most of a render's events
    // were check round trips, and the history server is what limits throughput. A local activity
    // runs inside a workflow task, so it gets a few seconds and one attempt (quickCheck); a check
    // that needs longer (a gateway outage, failover, 429 waits) is made again as a regular
    // activity (check), whose retries hold no workflow task. `check` as a local activity is what
    // workflows from before 'status-check-falls-back-to-activity' replay.
    quickCheck: proxyLocalActivities<typeof activities>({
      startToCloseTimeout: QUICK_CHECK_MS,
      retry: { maximumAttempts: 1 },
    }),
    check: proxyActivities<typeof activities>({
      startToCloseTimeout: timeout('status'),
      retry: { initialInterval: '2s', maximumInterval: '30s', maximumAttempts: 3 },
    }),
    checkLocal: proxyLocalActivities<typeof activities>({
      startToCloseTimeout: timeout('status'),
      retry: { initialInterval: '2s', maximumInterval: '30s', maximumAttempts: 3 },
    }),
    enhance: proxyActivities<typeof activities>({
      startToCloseTimeout: timeout('message'),
      retry: { initialInterval: '2s', maximumInterval: '30s', maximumAttempts: 2 },
    }),
    download: proxyActivities<typeof activities>({
      startToCloseTimeout: '2 hours',
      heartbeatTimeout: Math.max(settings.gateway.requestTimeoutMs, 30_000),
      retry: {
        initialInterval: '2s',
        maximumInterval: '1 minute',
        maximumAttempts: Math.max(1, settings.retries.download),
      },
    }),
  };
}

/**
 * The shared limits (workflows/limiter.ts): a render's ask for a permit (a signalWithStart, quick
 * and safe to repeat), and the limiter's check of its holders (describes; a failed check keeps the
 * holders until the next).
 */
export const permits = proxyActivities<typeof activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 5 },
});
