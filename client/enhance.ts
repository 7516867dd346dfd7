// The prompt rewrites of a job, made from this process (`reelflow enhance`, `run --enhance-only`,
// `run --re-enhance`, and any later UI): a pool of `max_in_flight` paid Messages calls with the key
// from this environment, one call per prompt text, each stored beside the outputs
// (storage/rewrites.ts) so that the renders send exactly the stored texts (docs/enhance.md).
import { rewriteOnce, rewritePricer } from '../activities/rewrite';
import {
  AuthError,
  GatewayUnavailableError,
  ModelUnavailableError,
  QuotaOrPermissionError,
  RouteNotFoundError,
  createGatewayClient,
  isGatewayError,
  redact,
} from '../gateway';
import type { Plan, PlanItem } from '../jobfile/plan';
import { rewritePriceOf } from '../jobfile/prices';
import { openStorage } from '../storage';
import type { ManifestRow } from '../storage/manifest';
import { RewriteStore, textToRender, type RewriteCall, type RewriteRecord } from '../storage/rewrites';
import { StorageError } from '../storage/storage';
import { InfrastructureError, UsageError } from './errors';
import { estimatePlan } from './estimate';
import { pricedAsStarted } from './jobs';
import { spendOf, type JobSpend } from './spend';

export interface ItemRewrite {
  item: PlanItem;
  record?: RewriteRecord;
  reused: boolean;
  error?: { kind: string; message: string };
}

export interface EnhanceOutcome {
  rewrites: ItemRewrite[];
  /** Where the records are. */
  location: string;
  /** A cause that is the job's, not an item's (key, model, route, every address down): the rest were not asked. */
  stoppedBy?: Error;
  /**
   * What the Messages calls made now cost (docs/costs.md), priced from their usage as a render's are,
   * beside the estimate of the job's rewrites; undefined when the enhance model has no price.
   */
  spend?: JobSpend;
}

/** Rewrites every item of the plan, reusing stored records unless `again`, `max_in_flight` at a time. */
export async function enhanceJob(plan: Plan, options: { again: boolean; note: (line: string) => void }): Promise<EnhanceOutcome> {
  const enhance = plan.enhance;
  if (!enhance) {
    throw new UsageError(`${plan.jobFile} has no enhance: block, so its prompts are sent as written: there is nothing to rewrite`);
  }
  const apiKey = process.env[plan.gateway.apiKeyEnv];
  if (!apiKey) {
    throw new UsageError(
      `the environment variable ${plan.gateway.apiKeyEnv} is not set: export your gateway key in it ` +
        '(gateway.api_key_env in the job file names the variable)',
    );
  }
  const storage = openStorage(plan.output);
  const store = new RewriteStore(storage);
  await asInfrastructure(() => storage.checkWritable());
  // Priced as status prices the job's spend (the prices its runs recorded beneath the job file's),
  // so a rewrite paid here counts the same wherever it shows (docs/costs.md).
  const priced = await pricedAsStarted(plan);
  const price = rewritePriceOf(priced.pricing ?? {}, enhance.model);
  const gateway = createGatewayClient({
    baseUrls: plan.gateway.baseUrls,
    apiKey,
    apiKeyEnv: plan.gateway.apiKeyEnv,
    requestTimeoutMs: plan.gateway.requestTimeoutMs,
    allowPrivateTargets: plan.gateway.allowPrivateTargets,
    createRetries: plan.retries.create,
    // Failover notes, one per failed attempt, only with --verbose: the outcome of each item is shown anyway.
    log: (level, message) => {
      if (level === 'warn' && process.env.REELFLOW_VERBOSE === '1') options.note(`warning: ${message}`);
    },
  });
  const rewrites: ItemRewrite[] = plan.items.map((item) => ({ item, reused: false }));
  let stoppedBy: Error | undefined;
  let next = 0;
  // One call per prompt text (docs/enhance.md): the takes of an item, and items that send the same
  // prompt, share the first one's answer, even while it is still being asked.
  const asked = new Map<string, Promise<Awaited<ReturnType<typeof rewriteOnce>>>>();
  const worker = async (): Promise<void> => {
    while (!stoppedBy && next < rewrites.length) {
      const slot = rewrites[next++]!;
      try {
        const prompt = slot.item.request.prompt;
        const shared = asked.get(prompt);
        const pending =
          shared ??
          rewriteOnce({
            key: slot.item.key,
            prompt,
            enhance,
            store,
            again: options.again,
            ask: (message) => gateway.createMessage(message),
            payer: { by: 'enhance', priceOf: rewritePricer(price, enhance, prompt) },
          });
        if (!shared) asked.set(prompt, pending);
        const done = await pending;
        slot.record = done.record;
        // Only the first item of a prompt made the call: the others reuse its answer.
        slot.reused = shared ? true : done.reused;
      } catch (error) {
        if (error instanceof StorageError) {
          stoppedBy ??= new InfrastructureError(error.message);
        } else if (jobWide(error)) {
          stoppedBy ??= error;
        }
        slot.error = {
          kind: isGatewayError(error) ? error.kind : error instanceof StorageError ? 'storage' : 'error',
          message: redact(error instanceof Error ? error.message : String(error)),
        };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(plan.concurrency.maxInFlight, rewrites.length)) }, worker));
  } finally {
    await gateway.close();
  }
  const estimate = estimatePlan(priced);
  const enhanceOnly = { ...estimate, per_model: estimate.per_model.filter((m) => m.role === 'enhance') };
  const spend = price
    ? spendOf(
        [],
        enhanceOnly,
        rewrites.flatMap((r) => (r.reused ? [] : paidCall(r.record))),
      )
    : undefined;
  return { rewrites, location: store.location, stoppedBy, ...(spend ? { spend } : {}) };
}

/** The call that made a record just now (its last): what it cost. */
export function paidCall(record: RewriteRecord | undefined): RewriteCall[] {
  const call = record?.calls?.at(-1);
  return call && call.at === record?.at ? [call] : [];
}

/**
 * Result rows with the rewrite beside the prompt: the one the render sent (the manifest's), else the
 * stored rewrite of the same prompt with the job's enhance settings, if any.
 */
export async function withRewrites(plan: Plan, rows: readonly ManifestRow[]): Promise<ManifestRow[]> {
  const enhance = plan.enhance;
  if (!enhance) return rows.map((row) => ({ ...row, enhanced_prompt: row.enhanced_prompt ?? null }));
  const store = new RewriteStore(openStorage(plan.output));
  return Promise.all(
    rows.map(async (row) => {
      if (row.enhanced_prompt) return row;
      const stored = await store.find(row.prompt, enhance, row.key);
      return { ...row, enhanced_prompt: stored ? textToRender(stored, row.prompt) : null };
    }),
  );
}

/** Causes that every other item would meet too: asking on would only repeat them. */
function jobWide(error: unknown): error is Error {
  return (
    error instanceof AuthError ||
    error instanceof ModelUnavailableError ||
    error instanceof RouteNotFoundError ||
    error instanceof QuotaOrPermissionError ||
    error instanceof GatewayUnavailableError
  );
}

async function asInfrastructure(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    throw error instanceof StorageError ? new InfrastructureError(error.message) : error;
  }
}

/** A job-wide cause as the error its exit status says: 3 for storage or every address down, else 2 (key, model, route, quota). */
export function asExitError(stopped: Error): InfrastructureError | UsageError {
  if (stopped instanceof InfrastructureError || stopped instanceof UsageError) return stopped;
  const message = redact(stopped.message);
  return stopped instanceof GatewayUnavailableError ? new InfrastructureError(message) : new UsageError(message);
}
