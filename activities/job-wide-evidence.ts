// `gateway_unavailable` stops the whole job with exit 3 (JOB_WIDE_CAUSES): it says that no base
// address of the gateway can be reached. One call's failure is evidence about that call only: a
// gateway (or a proxy before it) can hold one task's answer open, a byte at a time past the exchange
// deadline, while it answers every other call at once; one stuck connection then stopped every item
// not yet started. So before a gateway activity reports it, it asks each base address afresh, with
// the preflight's own read (gateway/catalog.ts: GET /v1/models, the worker's key rule); when one
// answers, the failure is the item's own (`call_unanswered`) and the job goes on. When none answers,
// or no time is left for the read, the failure stays job-wide as before: a gateway that is really
// down still stops the job at once.
import { Context } from '@temporalio/activity';
import { GatewayUnavailableError, readCatalogs } from '../gateway';
import { CATALOG_TIMEOUT_MS } from '../gateway/catalog';
import type { JobSettings } from '../jobfile/plan';
import { workerKeyFor } from './context';
import { FailureType } from '../domain/failures';
import { passingFailure } from './failures';

/** What the fresh read leaves of the activity's own time: the failure still has to be reported. */
const REPORT_MARGIN_MS = 2_000;
/** A read shorter than this proves nothing either way: the failure stays as the call ended. */
const SHORTEST_READ_MS = 500;

type JobOfWorker = JobSettings & { keyFingerprint?: string };

export interface EvidenceOptions {
  /**
   * The activity keeps heartbeating while the body and the read run (a create's keep-alive): only
   * its start-to-close timeout bounds the read. Otherwise its heartbeat timeout does too, counted
   * from the body's start (a download heartbeats only once its bytes flow).
   */
  heartbeating?: boolean;
}

/**
 * Runs one gateway activity's body (`what` names its call in the item's error: "the status check of
 * task X"). A `gateway_unavailable` it ends with is reported as such only when no base address
 * answers a fresh request just after; otherwise as the item's `call_unanswered`, which Temporal may
 * retry like the failure it replaces.
 */
export async function withJobWideEvidence<T>(
  settings: JobOfWorker,
  what: string,
  body: () => Promise<T>,
  options: EvidenceOptions = {},
): Promise<T> {
  const { info } = Context.current();
  const heartbeatMs = options.heartbeating ? undefined : info.heartbeatTimeoutMs || undefined;
  const deadline = Date.now() + Math.min(info.startToCloseTimeoutMs || 0, heartbeatMs ?? Infinity) - REPORT_MARGIN_MS;
  try {
    return await body();
  } catch (error) {
    if (!(error instanceof GatewayUnavailableError)) throw error;
    const answering = await basesAnswering(settings, deadline);
    if (answering.length === 0) throw error;
    throw passingFailure(
      FailureType.callUnanswered,
      `${what}: ${error.message}; ${answering.join(' and ')} answered a fresh request just after, ` +
        'so the gateway is up and only this item failed',
    );
  }
}

/** The base addresses that answer a fresh catalog read (any HTTP answer but a 5xx), by `deadline`. */
async function basesAnswering(settings: JobOfWorker, deadline: number): Promise<string[]> {
  if (Context.current().cancellationSignal.aborted) return [];
  const timeoutMs = Math.min(CATALOG_TIMEOUT_MS, deadline - Date.now());
  if (timeoutMs < SHORTEST_READ_MS) return [];
  try {
    // One request per address, all at once: the call before it already tried again for its whole
    // budget, and a gateway that is really down must stop the job without a further wait.
    const report = await readCatalogs(settings.gateway.baseUrls, { key: workerKeyFor(settings), timeoutMs, tries: 1 });
    return report.readings.filter((reading) => reading.kind !== 'unreachable').map((reading) => reading.base);
  } catch {
    // A read that could not be made is no evidence that the gateway is up.
    return [];
  }
}
