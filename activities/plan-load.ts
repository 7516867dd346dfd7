// Expanding a job file into its plan, as the worker needs it: the whole plan, its digest, the
// gateway calls' worst cases and the models without a price. Run in a child process of the worker
// (activities/plan-child.ts, docs/worker-memory.md): parsing a 30,000-item job file with
// positions peaks at over 150 MiB that a long-lived worker would keep as resident memory.
import { createHash } from 'node:crypto';
import { loadJobFile } from '../jobfile';
import { nodeFiles } from '../jobfile/context';
import type { CallBudgetsMs, Plan } from '../jobfile/plan';
import type { RedoTake } from '../jobfile/takes';
import { estimateEnhanceUsd, estimateItemUsd, type PriceTable } from '../jobfile/prices';
import { jobCallBudgets } from '../gateway/budget';
import { InputDigestError, InputMissingError, type InputsRef } from '../storage/inputs/refs';
import { FailureType } from '../domain/failures';
import { finalFailure } from './failures';
import { storedJobFiles } from './inputs';

export interface ExpandedPlan {
  plan: Plan;
  /** Digest of the expanded items: pages are read against it, so an edited job file is noticed. */
  digest: string;
  budgets: CallBudgetsMs;
  unpriced: UnpricedModel[];
}

export interface UnpricedModel {
  model: string;
  reason: string;
}

export function planDigest(plan: Pick<Plan, 'items'>): string {
  // An item's group (docs/takes.md) only names its source item, which its key and index already
  // pin: left out, so a job planned before groups existed keeps its digest through an upgrade.
  const items = plan.items.some((item) => item.group !== undefined) ? plan.items.map(({ group: _group, ...item }) => item) : plan.items;
  return createHash('sha256').update(JSON.stringify(items)).digest('hex').slice(0, 16);
}

/** Where the job's price table has no price for a model's item: model and why, once per model. */
export function unpricedModels(plan: Pick<Plan, 'items' | 'pricing'> & { enhance?: Plan['enhance'] }): UnpricedModel[] {
  const seen = new Map<string, string>();
  // The budget reserves prompt rewrites too: the enhance model needs a price (its first prompt shows why not).
  const first = plan.items[0];
  if (plan.enhance && first) {
    const rewrite = estimateEnhanceUsd(plan.pricing ?? {}, plan.enhance, first.request.prompt);
    if ('unpriced' in rewrite) seen.set(plan.enhance.model, rewrite.unpriced);
  }
  for (const item of plan.items) {
    if (seen.has(item.request.model)) continue;
    const estimate = estimateItemUsd(plan.pricing ?? {}, item.request);
    if ('unpriced' in estimate) seen.set(item.request.model, estimate.unpriced);
  }
  return [...seen].map(([model, reason]) => ({ model, reason }));
}

/** Stored inputs that are gone or wrong stay so: fail at once instead of retrying. */
export function finalWhenGone(error: unknown): never {
  if (error instanceof InputMissingError || error instanceof InputDigestError) {
    throw finalFailure(FailureType.storage, error.message);
  }
  throw error;
}

export async function expandPlan(
  jobFile: string,
  runDate: string,
  inputs: InputsRef | undefined,
  redo?: readonly RedoTake[],
  /** The prices `run` priced the job with (JobInput.prices): in place of the job file's. */
  prices?: PriceTable,
  /** Folders outside the job file's own its user let it read (JobInput.allowRead): never the job file's say. */
  allowRead?: readonly string[],
): Promise<ExpandedPlan> {
  const stored = inputs ? await storedJobFiles(inputs).catch(finalWhenGone) : undefined;
  const result = await loadJobFile(stored?.jobFile ?? jobFile, {
    runDate,
    files: stored?.files,
    ...(redo ? { redo } : {}),
    ...(allowRead ? { allowRead } : {}),
    // Who hears of the job is no reason not to render it: a name this worker does not define fails its delivery.
    checkNotifyTargets: false,
  });
  if (!result.ok) {
    const lines = result.errors.slice(0, 10).map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`);
    throw finalFailure(FailureType.jobFileInvalid, `the job file is not valid:\n${lines.join('\n')}`);
  }
  // The gateway calls' worst cases for this job (a create's from its largest body): the workflows
  // give each gateway activity that long (workflows/activities.ts).
  const files = stored?.files ?? nodeFiles;
  const sizes = new Map<string, number | undefined>();
  const sizeOf = (path: string) => (sizes.has(path) ? sizes.get(path) : sizes.set(path, files.size?.(path)).get(path));
  const budgets = jobCallBudgets(
    result.plan.gateway,
    result.plan.items.map((item) => item.request),
    sizeOf,
  );
  const unpriced = unpricedModels({ ...result.plan, pricing: prices ?? result.plan.pricing });
  return { plan: result.plan, digest: planDigest(result.plan), budgets, unpriced };
}
