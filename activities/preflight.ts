// A worker's preflight (docs/preflight.md): before the first create of a job, the worker reads the
// gateway's catalog once (gateway/catalog.ts, the check `run` makes) and refuses a create whose
// model the catalog lacks, without sending it. This covers the jobs `run` did not check in this
// process: `run --no-worker` elsewhere, schedules, a detached run's background worker. The
// reading is kept per job and gateway for the life of the process; `run` hands its own reading to
// the worker it runs in the same process, so that one costs no second request.
import type { ApplicationFailure } from '@temporalio/activity';
import { FailureType } from '../domain/failures';
import type { GatewayErrorKind } from '../gateway';
import { judgeCatalog, readCatalogs, verdictMessage, type CatalogReport } from '../gateway/catalog';
import type { JobSettings } from '../jobfile/plan';
import { workerKeyFor } from './context';
import { finalFailure } from './failures';

/**
 * The details of a create failure that provably sent nothing (the preflight refused it before any
 * request): the item was never created, so nothing was paid for.
 */
export interface CreateNotSentDetails {
  createSent: false;
}

export const CREATE_NOT_SENT: CreateNotSentDetails = { createSent: false };

type GatewayOfJob = Pick<JobSettings, 'job' | 'gateway'>;
/** A job's settings as a worker holds them: with the starter's key fingerprint (docs/keys.md). */
type JobOfWorker = JobSettings & { keyFingerprint?: string };

const readings = new Map<string, Promise<CatalogReport>>();

function readingKey(settings: GatewayOfJob): string {
  const { baseUrls, apiKeyEnv } = settings.gateway;
  return JSON.stringify([settings.job, baseUrls, apiKeyEnv]);
}

/** `run`'s reading of the job's gateway, made in this process: the worker beside it reuses it. */
export function rememberCatalog(settings: GatewayOfJob, report: CatalogReport): void {
  if (report.readings.some((r) => r.kind !== 'unreachable')) readings.set(readingKey(settings), Promise.resolve(report));
}

/**
 * Resolves when a create of `model` may be sent. Otherwise throws, with nothing sent, a failure of
 * the gateway's own kinds: `model_unavailable` for a model the catalog lacks, `auth` for a key
 * every answering address refused. When no address answers, the create itself finds out.
 */
export async function preflightCreate(settings: JobOfWorker, model: string): Promise<void> {
  // The worker's key rule and the starter's fingerprint come first, for this read as for the create:
  // a handed job must not make the worker send its key (or another secret) anywhere else.
  const key = workerKeyFor(settings);
  const cacheKey = readingKey(settings);
  let pending = readings.get(cacheKey);
  if (!pending) {
    pending = readCatalogs(settings.gateway.baseUrls, { key });
    readings.set(cacheKey, pending);
  }
  let report: CatalogReport;
  try {
    report = await pending;
  } catch (error) {
    readings.delete(cacheKey);
    throw error;
  }
  const verdict = judgeCatalog(report, [{ model, role: 'video', sites: [] }], settings.gateway.apiKeyEnv);
  if (verdict.exit === 0) return;
  const message = verdictMessage(verdict);
  if (verdict.exit === 3) {
    // Not kept: the next create asks again. This one goes on to the client, whose failover and
    // retry budget decide (gateway/retry.ts): an outage shorter than that budget costs no item,
    // and one past it ends the create `gateway_unavailable`, nothing sent, as without a preflight.
    readings.delete(cacheKey);
    return;
  }
  throw notSent(report.catalog ? FailureType.modelUnavailable : FailureType.auth, message);
}

/** A failure of the gateway error kind `type`, carrying the proof that no create was sent. */
function notSent(type: GatewayErrorKind, message: string): ApplicationFailure {
  return finalFailure(type, message, [CREATE_NOT_SENT]);
}
