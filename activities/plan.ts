// Plan activities: the worker reads the job file (and its local files) itself, so workflow history
// carries only the settings and one page of items at a time. A job whose inputs were stored
// (activities/inputs.ts) is read from their fetched copies, under the same paths.
import { stat } from 'node:fs/promises';
import { log } from '@temporalio/activity';
import { dirname, relative } from 'node:path';
import { dateIn } from '../jobfile';
import { PLAN_PAGE_BYTES, serializedBytes } from '../jobfile/item-size';
import { shortHash } from '../jobfile/keys';
import type { RedoTake } from '../jobfile/takes';
import type { OutputSettings, PlanItem, Protocol, RenderRequest } from '../jobfile/plan';
import { estimateEnhanceUsd, estimateItemUsd, rewritePriceOf, type PriceTable, type RewritePrice } from '../jobfile/prices';
import { withPublishedPrices } from '../gateway/published-prices';
import { recordJobPrices } from '../storage/records/job-prices';
import { RewriteStore, rewriteId, unrecordedRewrites, type RewriteCall } from '../storage/records/rewrites';
import type { InputsRef } from '../storage/inputs/refs';
import type { ItemEndState } from '../domain/end-states';
import { itemIsDone, latestRowByKey, type ManifestRow } from '../storage/manifest/row';
import { ledger, totalUsd } from '../storage/manifest/spend-rows';
import { OutputOwnedError, claimOutput } from '../storage/records/owner';
import { storageFor, workerKeyFor } from './context';
import { FailureType } from '../domain/failures';
import { LogEvent, bounded } from './log-events';
import { finalFailure } from './failures';
import { storedJobFiles, type JobSettingsWithInputs } from './inputs';
import { ManifestFollower, changedSince, type KnownRow } from './manifest-follower';
import { expandInChild, type PlanFile, type PlanHead } from './plan-file';
import { finalWhenGone, type UnpricedModel } from './plan-load';
import { checkedDigests, localReferenceDigests, withCheckedReferences, type ReferenceDigests } from './reference-digests';
import { readScopeForJob } from './worker-read-scope';

export { planDigest, unpricedModels } from './plan-load';

export interface PreparedJob {
  /** With the job's stored inputs, when it has them: its items' creates fetch their references there. */
  settings: JobSettingsWithInputs;
  runDate: string;
  /** Digest of the expanded plan: pages are read against it, so an edited job file is noticed. */
  digest: string;
  itemCount: number;
  /**
   * With a budget: what earlier runs of the job spent (the sum of the manifest's cost_usd), which
   * the budget counts (docs/costs.md). Absent without a budget.
   */
  spentUsd?: number;
  /**
   * A run no `run` priced (a schedule's): the prices its worker read from the gateway beneath the job
   * file's and its prices files' (docs/costs.md). Its pages are priced with them, in place of the
   * job file's, as with JobInput.prices. Absent when the gateway had none to add.
   */
  prices?: PriceTable;
  /** Where each priced model's price came from (`job file`, `gateway http://… (/api/pricing)`): the run says it (job.started). */
  priceSources?: Record<string, string>;
}

/** A task an earlier run created for the item (its latest manifest row), asked before creating again. */
export interface PriorTask {
  taskId: string;
  protocol: Protocol;
  /** When it was created (ms): the gateway's not-exist window is counted from it. */
  createdAt: number;
  baseUrl?: string;
  /** The rewritten prompt the task was created with, kept in the item's next row. */
  enhancedPrompt?: string;
}

/** A plan item as a page hands it to its workflow: with what the manifest knew of it. */
export interface PageItem extends PlanItem {
  /**
   * Its place in the run's plan, 1-based: what the job's window counts by (workflows/job.ts). Not
   * `index`, which the takes of one prompt share and a redo run's takes keep from the whole job.
   * Absent from pages of older workers.
   */
  position?: number;
  /** requestDigest of its request, recorded in its manifest row. Absent from pages of older workers. */
  requestDigest?: string;
  /** The task the item already holds, when reusing it may save a paid render. */
  prior?: PriorTask;
  /** What one create of the item costs (jobfile/prices.ts estimateItemUsd); absent when unpriced. */
  estimateUsd?: number;
  /**
   * What its prompt rewrite costs (estimateEnhanceUsd), when the job enhances prompts with a priced
   * model and has no stored rewrite of this prompt for the item: reserved by a budget, and recorded
   * as its rewrite_cost_usd when the answer's usage cannot price the call (docs/costs.md).
   */
  rewriteEstimateUsd?: number;
  /** The enhance model's prices, which the enhance activity prices the answer's usage with (rewriteCostUsd). */
  rewritePrice?: RewritePrice;
  /**
   * Names its prompt text's rewrite (storage/records/rewrites.ts rewriteId), for a job with `enhance:`: the
   * takes and items that send one prompt share one Messages call through it (workflows/rewrite.ts).
   * Absent from pages of older workers: the item asks on its own, as it did.
   */
  rewriteId?: string;
  /**
   * The keys of its needs (PlanItem.needs) that succeeded in an earlier run, their output still
   * stored: the job counts them as succeeded (workflows/chain.ts). Absent when none.
   */
  needsMet?: string[];
}

/**
 * Digest of everything an item asks the gateway for: model, protocol, prompt, parameters and
 * references, as the item key hashes them (jobfile/expand.ts): a local reference by its path
 * relative to the job file (so that moving the job's folder changes nothing) and by its content's
 * sha256 (so that a file edited in place is a changed request). Undefined when a local reference's
 * content cannot be known now: the item is then judged by its prompt, model and protocol
 * (requestChanged), never rendered again only because a file is missing (docs/reruns.md).
 */
export async function requestDigest(request: RenderRequest, jobFile: string, contents: ReferenceDigests): Promise<string | undefined> {
  const dir = dirname(jobFile);
  const references: Array<{ kind: string; role: string; source: string; sha256?: string }> = [];
  for (const { kind, role, source, local } of request.references) {
    if (!local) {
      references.push({ kind, role, source });
      continue;
    }
    const sha256 = await contents(source);
    if (sha256 === undefined) return undefined;
    references.push({ kind, role, source: relative(dir, source), sha256 });
  }
  return shortHash({ ...request, references });
}

const manifestFollower = new ManifestFollower();

interface LoadedPlan {
  plan: PlanFile;
  contents: ReferenceDigests;
}

/** The plans of the jobs a worker serves now; each holds an open file, not its items. */
const plans = new Map<string, LoadedPlan>();
const KEPT_PLANS = 4;
/** A plan replaced in the cache is closed this much later: a page being read from it finishes first. */
const CLOSE_REPLACED_AFTER_MS = 60_000;

async function loadPlan(
  jobFile: string,
  runDate: string,
  inputs: InputsRef | undefined,
  redo?: readonly RedoTake[],
  prices?: PriceTable,
  allowRead?: readonly string[],
): Promise<LoadedPlan> {
  // Stored inputs never change under their digest. A path's plan stands while the file is
  // unchanged (same size and modification time), so an edit during a run is still caught by the
  // digest check of readPlanItems.
  const version = inputs
    ? `inputs:${inputs.index}`
    : await stat(jobFile).then(
        (st) => `${st.size}:${st.mtimeMs}`,
        () => 'missing',
      );
  const options = [redo && shortHash(redo), prices && shortHash(prices), allowRead?.length && `read:${shortHash(allowRead)}`];
  const cacheKey = [jobFile, runDate, version, ...options.filter(Boolean)].join('\u0000');
  const cached = plans.get(cacheKey);
  if (cached) return cached;
  // A redo's plan is its new takes alone (docs/takes.md): pages, counts and the digest are theirs.
  const plan = await expandInChild(jobFile, runDate, inputs, redo, prices, allowRead);
  // A stored job's references are known by the sha256 its index recorded; others are hashed where they are.
  const stored = inputs ? await storedJobFiles(inputs).catch(finalWhenGone) : undefined;
  const contents: ReferenceDigests = stored ? async (path) => stored.sha256(path) : localReferenceDigests;
  const entry = { plan, contents };
  plans.set(cacheKey, entry);
  for (const [key, old] of plans) {
    if (plans.size <= KEPT_PLANS) break;
    plans.delete(key);
    setTimeout(() => old.plan.close(), CLOSE_REPLACED_AFTER_MS).unref();
  }
  return entry;
}

/**
 * The job's claim on its output location (storage/records/owner.ts), as `run` makes it; here for runs that no
 * `run` started (schedules, workers of another machine): another job's location fails the job before
 * any item starts.
 */
async function claimOutputForJob(plan: PlanHead, workflowId: string): Promise<void> {
  try {
    await claimOutput(storageFor(plan.output), { job: plan.job, workflowId });
  } catch (error) {
    if (!(error instanceof OutputOwnedError)) throw error;
    throw finalFailure(FailureType.outputOwned, error.message);
  }
}

export async function preparePlan(input: {
  jobFile: string;
  runDate?: string;
  startedAt: number;
  inputs?: InputsRef;
  /** The job workflow's id: the job claims its output location (absent from workflows before the claim). */
  workflowId?: string;
  keyFingerprint?: string;
  /** `run --budget`: wins over the job file's budget.max_usd. */
  budgetUsd?: number;
  /** `run --redo`/`--only`: the job renders these takes and nothing else (docs/takes.md). */
  redo?: RedoTake[];
  /** The prices `run` priced the job with (JobInput.prices): in place of the job file's. */
  prices?: PriceTable;
  /** Folders outside the job file's own its user let it read (JobInput.allowRead). */
  allowRead?: string[];
}): Promise<PreparedJob> {
  const allowRead = readScopeForJob(input.allowRead);
  // Scheduled runs carry no date: the first load learns the schedule's zone, the second dates it.
  let runDate = input.runDate;
  if (!runDate) {
    const probe = await loadPlan(input.jobFile, dateIn(input.startedAt, 'UTC'), input.inputs, input.redo, input.prices, allowRead);
    runDate = dateIn(input.startedAt, probe.plan.head.schedule?.timezone ?? 'UTC');
  }
  let { plan: loaded } = await loadPlan(input.jobFile, runDate, input.inputs, input.redo, input.prices, allowRead);
  const { head: plan, digest, budgets } = loaded;
  if (input.workflowId) await claimOutputForJob(plan, input.workflowId);
  // The price table and where models are named stay out: settings travel with every activity (docs/costs.md).
  const { jobFile: _f, runDate: _d, warnings: _w, pricing: _p, modelSites: _m, ...planned } = plan;
  const maxUsd = input.budgetUsd ?? plan.budget?.maxUsd;
  const settings = {
    ...planned,
    ...(maxUsd !== undefined ? { budget: { maxUsd } } : {}),
    gateway: { ...planned.gateway, callBudgetMs: budgets },
  };
  const carried = {
    ...(input.inputs ? { inputs: input.inputs } : {}),
    // The fingerprint is bound to the job file it was made for (activities/job-key-check.ts).
    ...(input.keyFingerprint ? { keyFingerprint: input.keyFingerprint, jobFile: input.jobFile } : {}),
  };
  // A run no `run` priced asks the gateway itself, as `run` would have, when it starts: a schedule's
  // runs are priced as of each run, not as of the schedule's creation.
  const read = input.prices ? undefined : await gatewayPrices(loaded, { ...settings, ...carried });
  if (read) loaded = (await loadPlan(input.jobFile, runDate, input.inputs, input.redo, read, allowRead)).plan;
  const prices = input.prices ?? read ?? plan.pricing ?? {};
  // Who priced the run records its prices beside the manifest: `run` before it starts its jobs, the
  // worker for the others (storage/records/job-prices.ts).
  if (!input.prices)
    await recordPrices(plan.output, prices, [...Object.keys(prices), ...loaded.unpriced.map((u) => u.model)], input.workflowId);
  const prepared: PreparedJob = {
    settings: { ...settings, ...carried },
    runDate,
    digest,
    itemCount: loaded.itemCount,
    ...(read ? { prices: read } : {}),
    ...(Object.keys(prices).length > 0 ? { priceSources: Object.fromEntries(Object.entries(prices).map(([m, p]) => [m, p.source])) } : {}),
  };
  if (maxUsd === undefined) return prepared;
  refuseUnpriced(loaded.unpriced);
  const storage = storageFor(plan.output);
  const { rows } = await storage.readManifest();
  // Rewrites paid that no row counts (`reelflow enhance`'s, an item left not started): spent too, as status shows.
  const unrecorded = plan.enhance ? await unrecordedRewrites(new RewriteStore(storage), rows) : [];
  return { ...prepared, spentUsd: spentBefore(rows, unrecorded) };
}

/**
 * Records a run's prices for status and results (docs/costs.md). They are a convenience, not the
 * run's work: where this worker may not write them (a `.reelflow/` made by another user) it says so
 * in its log and the run goes on; status then prices with the job file's.
 */
async function recordPrices(output: OutputSettings, prices: PriceTable, used: string[], jobId: string | undefined): Promise<void> {
  try {
    await recordJobPrices(storageFor(output), prices, used);
  } catch (error) {
    log.warn('the prices of the run could not be recorded beside its manifest', {
      event: LogEvent.jobPricesNotRecorded,
      ...(jobId ? { jobId } : {}),
      reason: bounded((error as Error).message),
    });
  }
}

/**
 * The job file's prices with the gateway's published ones beneath, for the models it leaves without
 * a price; undefined when the gateway adds none. The worker's key is sent (to LiteLLM's model info)
 * only where its key rule and the starter's fingerprint allow (activities/context.ts); without it
 * new-api's public prices are still read.
 */
async function gatewayPrices(loaded: PlanFile, settings: Parameters<typeof workerKeyFor>[0]): Promise<PriceTable | undefined> {
  // The models without a price are exactly those the gateway is asked for (withPublishedPrices).
  const unpriced = loaded.unpriced.map((u) => u.model);
  if (unpriced.length === 0) return undefined;
  let key: string | undefined;
  try {
    key = workerKeyFor(settings);
  } catch {
    key = undefined;
  }
  const { table, published } = await withPublishedPrices(loaded.head.pricing, unpriced, settings.gateway.baseUrls, key ? { key } : {});
  return Object.keys(published.prices).length > 0 ? table : undefined;
}

/**
 * A budget cannot hold an item it cannot price: the job is refused, naming the models (docs/costs.md).
 * `run` refuses it first (cli/commands/run.ts); this covers the jobs no `run` started.
 */
function refuseUnpriced(unpriced: readonly UnpricedModel[]): void {
  if (unpriced.length === 0) return;
  throw finalFailure(FailureType.budgetUnpriced, unpricedMessage(unpriced));
}

export function unpricedMessage(unpriced: readonly UnpricedModel[]): string {
  const names = unpriced.map((u) => `${u.model} (${u.reason})`).join(', ');
  return `a budget is set and these models have no price: ${names}; give each a price under pricing: (per_video: 0 for a free one) or run without a budget`;
}

/**
 * What earlier runs of the job spent: every row's cost_usd and rewrite_cost_usd (each run of an item
 * appends its own row), and the paid rewrite calls no row counts (storage/records/rewrites.ts unrecordedRewrites).
 * Only amounts count (storage/manifest/spend-rows.ts): nothing planted in the manifest lowers the sum.
 */
export function spentBefore(rows: readonly ManifestRow[], unrecorded: readonly Pick<RewriteCall, 'cost_usd'>[] = []): number {
  return totalUsd(ledger(rows, unrecorded));
}

/**
 * One page of the plan, without the items that are already done: a succeeded output still present
 * in storage, or an item that ended in a state the user did not ask to retry. A canceled item is
 * not done: running the job again continues it.
 */
export async function readPlanItems(input: {
  jobFile: string;
  runDate: string;
  digest: string;
  offset: number;
  limit: number;
  retryStates: ItemEndState[];
  output: OutputSettings;
  /** The job's stored inputs; absent: the job file is read at its path. */
  inputs?: InputsRef;
  /** `run --redo`/`--only`: the takes the job renders, as preparePlan had them. */
  redo?: RedoTake[];
  /** The prices `run` priced the job with (JobInput.prices): in place of the job file's. */
  prices?: PriceTable;
  /** Folders outside the job file's own its user let it read (JobInput.allowRead). */
  allowRead?: string[];
}): Promise<{ items: PageItem[]; nextOffset: number }> {
  const allowRead = readScopeForJob(input.allowRead);
  const { plan, contents } = await loadPlan(input.jobFile, input.runDate, input.inputs, input.redo, input.prices, allowRead);
  if (plan.digest !== input.digest) {
    throw finalFailure(
      FailureType.jobFileChanged,
      input.inputs
        ? // The stored files cannot change: only a worker that expands them differently (another version) can.
          `${input.jobFile}: the job's stored files expand to another plan on this worker than when the job started (another reelflow version?): run the job again`
        : `${input.jobFile} changed while its job was running: cancel the job (reelflow cancel) and run it again`,
    );
  }
  const page = plan.items(input.offset, input.limit);
  const storage = storageFor(input.output);
  const ask = { digest: input.digest, offset: input.offset };
  const manifest = await manifestFollower.latest(storage, ask);
  for (const { where, problem } of manifest.skipped)
    log.warn('a manifest line that is not a row was skipped', { event: LogEvent.jobManifestRowSkipped, where, problem: bounded(problem) });
  const retry = new Set<ItemEndState>(input.retryStates);
  const rewrites = new RewriteStore(storage);
  const { enhance } = plan.head;
  // The page's prices, the same for every item of it.
  const table = input.prices ?? plan.head.pricing ?? {};
  const rewritePrice = enhance ? rewritePriceOf(table, enhance.model) : undefined;
  const todo: PageItem[] = [];
  // The page is one activity result: it stops before PLAN_PAGE_BYTES of items (Temporal refuses a
  // payload over 2 MB; jobfile/item-size.ts), and nextOffset says where, so the next page goes on.
  let bytes = 0;
  let read = 0;
  const keys: string[] = [];
  // What each create will send is fixed here, with the digest (activities/reference-digests.ts);
  // a job with stored inputs sends their verified copies instead (activities/inputs.ts).
  const scope = { jobDir: dirname(input.jobFile), allowRead };
  for (const planned of page) {
    const item = input.inputs ? planned : { ...planned, request: await withCheckedReferences(planned.request, scope) };
    const row = manifest.rows.get(item.key);
    const digest = await requestDigest(item.request, input.jobFile, input.inputs ? contents : checkedDigests(item.request));
    const changed = row !== undefined && changedSince(row, item.request, digest);
    const stored = row?.state === 'succeeded' && row.file ? await storage.stat(row.file) : undefined;
    if (!itemIsDone(row, retry, stored, changed)) {
      const todoItem: PageItem = { ...item, position: input.offset + read + 1, ...(digest !== undefined ? { requestDigest: digest } : {}) };
      const estimate = estimateItemUsd(table, item.request);
      if ('usd' in estimate) todoItem.estimateUsd = estimate.usd;
      // The rewrite this item will pay for (none when its rewrite is stored): its manifest row records
      // it (rewrite_cost_usd), and a budget reserves it (docs/costs.md). One record read per priced item.
      const rewrite = enhance ? estimateEnhanceUsd(table, enhance, item.request.prompt) : undefined;
      if (rewrite && 'usd' in rewrite && !(await rewrites.find(item.request.prompt, enhance!, item.key)))
        todoItem.rewriteEstimateUsd = rewrite.usd;
      if (rewritePrice && rewrite && 'usd' in rewrite) todoItem.rewritePrice = rewritePrice;
      if (enhance) todoItem.rewriteId = rewriteId(item.request.prompt, enhance);
      // Another request's render holds the plain name: this one is written beside it, never over it.
      const holder = manifest.firstFiles.get(item.key);
      if (holder && digest !== undefined && changedSince(holder, item.request, digest))
        todoItem.outputName = `${item.outputName}.${digest.slice(0, 8)}`;
      const prior = row && !changed ? priorTask(row) : undefined;
      if (prior) todoItem.prior = prior;
      const size = serializedBytes(todoItem);
      if (todo.length > 0 && bytes + size > PLAN_PAGE_BYTES) break;
      bytes += size;
      todo.push(todoItem);
    }
    read += 1;
    keys.push(item.key);
  }
  manifestFollower.decided(manifest, ask, keys);
  await withNeedsMet(todo, storage);
  return { items: todo, nextOffset: input.offset + read };
}

/**
 * Marks on each item with needs which of them an earlier run rendered (a succeeded row whose output
 * is still stored), and gives its create the needs it sends (activities/needs.ts). The manifest is
 * read whole, once per page with needs: the follower keeps no rows of the items its pages passed,
 * and those are exactly the items a later one needs.
 */
export async function withNeedsMet(items: PageItem[], storage: ReturnType<typeof storageFor>): Promise<void> {
  const chained = items.filter((item) => item.needs && item.needs.length > 0);
  if (chained.length === 0) return;
  const latest = latestRowByKey((await storage.readManifest()).rows);
  const present = new Map<string, boolean>();
  const met = async (key: string): Promise<boolean> => {
    const known = present.get(key);
    if (known !== undefined) return known;
    const row = latest.get(key);
    const stored = row?.state === 'succeeded' && row.file ? (await storage.stat(row.file)) !== undefined : false;
    present.set(key, stored);
    return stored;
  };
  for (const item of chained) {
    const needs = item.needs!;
    const keys: string[] = [];
    for (const need of needs) if ((await met(need.key)) && !keys.includes(need.key)) keys.push(need.key);
    if (keys.length > 0) item.needsMet = keys;
    const sent = needs.filter((need) => need.use !== 'after');
    if (sent.length > 0) item.request = { ...item.request, needs: sent };
  }
}

/**
 * The task of an item's latest row when asking it may save a render: any row with a task id
 * (canceled, timed out, a download that failed, a video since deleted), except one whose task the
 * gateway already said failed or lost.
 */
function priorTask(row: KnownRow): PriorTask | undefined {
  if (!row.task_id || !row.created_at) return undefined;
  const kind = row.error?.kind;
  if (kind === FailureType.renderFailed || kind === FailureType.taskNotFound) return undefined;
  const createdAt = Date.parse(row.created_at);
  if (!Number.isFinite(createdAt)) return undefined;
  const baseUrl = row.create_base_url ?? row.base_url ?? undefined;
  const enhancedPrompt = row.enhanced_prompt ?? undefined;
  return {
    taskId: row.task_id,
    protocol: row.protocol,
    createdAt,
    ...(baseUrl ? { baseUrl } : {}),
    ...(enhancedPrompt ? { enhancedPrompt } : {}),
  };
}
