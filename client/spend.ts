// What a job spent (docs/costs.md): every manifest row's cost_usd, each run of an item its own row,
// billed and estimated apart, per model and in total, beside what the plan was estimated at; and the
// paid prompt rewrites no row counts (`reelflow enhance`'s, and those of items a job-wide cause left
// not started), from the rewrite records.
import { roundUsd } from '../jobfile/prices';
import { latestRowByKey, type ManifestRow } from '../storage/manifest';
import { openStorage } from '../storage';
import { eachRunOnce, ledger, trustedCosts, type ChargeSource } from '../storage/spend-rows';
import { RewriteStore, notInRows, rewriteCalls, type RewriteCall, type UnrecordedRewrite } from '../storage/rewrites';
import { estimatePlan, formatUsd, type ModelEstimate, type PlanEstimate } from './estimate';
import type { Plan } from '../jobfile/plan';
import { readManifestRows } from './manifest-rows';

export interface ModelSpend {
  model: string;
  spent_usd: number;
  /** The gateway's own figures (cost_source `billed`). */
  billed_usd: number;
  /** Prompt rewrites priced from their answer's token usage (rewrite_cost_source `usage`). */
  usage_usd: number;
  /** The estimate times the creates that may have been sent (cost_source `estimated`), and rewrites at their estimate. */
  estimated_usd: number;
  /** What the plan's creates (or rewrites, for the enhance model) of this model were estimated at (the priced ones); null: no price. */
  estimate_usd: number | null;
}

export interface JobSpend {
  currency: 'USD';
  spent_usd: number;
  billed_usd: number;
  usage_usd: number;
  estimated_usd: number;
  /** The plan's creates and rewrites, estimated (the priced part); null when no model of the plan has a price. */
  estimate_usd: number | null;
  per_model: ModelSpend[];
  /** The renders that did not succeed and record a create's cost, by what the gateway said; absent when there are none. */
  unsuccessful?: UnsuccessfulSpend;
}

/**
 * What the renders that did not succeed count (docs/costs.md): all of it is spend, as the budget
 * counts it, but a failure's estimate is no charge the gateway reported, so each part says which.
 */
export interface UnsuccessfulSpend {
  renders: number;
  /** The gateway reported a charge (cost_source `billed`, above 0). */
  charged: number;
  charged_usd: number;
  /** The gateway reported none (`billed`, 0). */
  not_charged: number;
  /** No charge of the gateway's to go by: counted at the estimate (it may have charged). */
  estimated: number;
  estimated_usd: number;
}

/**
 * The spend of a job's manifest rows; undefined when nothing is priced or recorded. A row's prompt
 * rewrite (rewrite_cost_usd: from its usage, or estimated) counts for the enhance model, its create
 * for the row's model; so does each paid rewrite call in `rewrites` (those no row counts:
 * unrecordedRewrites).
 */
export function spendOf(
  rows: readonly ManifestRow[],
  estimate: PlanEstimate,
  rewrites: readonly Pick<RewriteCall, 'cost_usd' | 'cost_source'>[] = [],
): JobSpend | undefined {
  const models = new Map<string, ModelSpend>();
  const of = (model: string, role: ModelEstimate['role'] = 'video'): ModelSpend => {
    const key = `${role}\u0000${model}`;
    let m = models.get(key);
    if (!m) {
      const priced = estimate.per_model.find((v) => v.model === model && v.role === role && v.priced_items > 0);
      m = { model, spent_usd: 0, billed_usd: 0, usage_usd: 0, estimated_usd: 0, estimate_usd: priced ? priced.usd : null };
      models.set(key, m);
    }
    return m;
  };
  for (const v of estimate.per_model) if (v.priced_items > 0) of(v.model, v.role);
  const enhanceModel = estimate.per_model.find((v) => v.role === 'enhance')?.model;
  const add = (m: ModelSpend, usd: number, source: ChargeSource) => {
    if (source === 'billed') m.billed_usd = roundUsd(m.billed_usd + usd);
    else if (source === 'usage') m.usage_usd = roundUsd(m.usage_usd + usd);
    else m.estimated_usd = roundUsd(m.estimated_usd + usd);
    m.spent_usd = roundUsd(m.billed_usd + m.usage_usd + m.estimated_usd);
  };
  // The ledger every spend is computed from (storage/spend-rows.ts): only amounts count.
  const charges = ledger(rows, rewrites, enhanceModel);
  for (const charge of charges) add(of(charge.model, charge.role), charge.usd, charge.source);
  const recorded = charges.length > 0;
  if (!recorded && models.size === 0) return undefined;
  const perModel = [...models.values()];
  const sum = (pick: (m: ModelSpend) => number) => roundUsd(perModel.reduce((total, m) => total + pick(m), 0));
  const unsuccessful = unsuccessfulSpend(rows);
  return {
    currency: 'USD',
    spent_usd: sum((m) => m.spent_usd),
    billed_usd: sum((m) => m.billed_usd),
    usage_usd: sum((m) => m.usage_usd),
    estimated_usd: sum((m) => m.estimated_usd),
    estimate_usd: perModel.some((m) => m.estimate_usd !== null) ? sum((m) => m.estimate_usd ?? 0) : null,
    per_model: perModel,
    ...(unsuccessful ? { unsuccessful } : {}),
  };
}

/** The creates of the rows (each run of an item once) that did not succeed, by what the gateway said they cost. */
function unsuccessfulSpend(rows: readonly ManifestRow[]): UnsuccessfulSpend | undefined {
  const parts: UnsuccessfulSpend = { renders: 0, charged: 0, charged_usd: 0, not_charged: 0, estimated: 0, estimated_usd: 0 };
  for (const row of eachRunOnce(rows)) {
    const { costUsd } = trustedCosts(row);
    if (row.state === 'succeeded' || costUsd === undefined) continue;
    parts.renders++;
    if (row.cost_source !== 'billed') {
      parts.estimated++;
      parts.estimated_usd = roundUsd(parts.estimated_usd + costUsd);
    } else if (costUsd > 0) {
      parts.charged++;
      parts.charged_usd = roundUsd(parts.charged_usd + costUsd);
    } else parts.not_charged++;
  }
  return parts.renders > 0 ? parts : undefined;
}

const NO_CHARGE_TO_GO_BY = 'the gateway gave no charge to go by';

/**
 * What a render that did not succeed cost, as the gateway said (cost_source `billed`: charged, or
 * not at 0) or estimated (the gateway gave no figure, or one below the price that is not believed:
 * docs/costs.md); undefined when the row records no create's cost (none was sent, or no price).
 */
export function createChargeText(row: Pick<ManifestRow, 'cost_usd' | 'cost_source'>): string | undefined {
  const { costUsd } = trustedCosts(row);
  if (costUsd === undefined) return undefined;
  if (row.cost_source !== 'billed') return `${formatUsd(costUsd)} estimated: ${NO_CHARGE_TO_GO_BY}, it may have charged`;
  return costUsd > 0 ? `charged ${formatUsd(costUsd)}, as the gateway said` : 'not charged, as the gateway said';
}

/** What the renders that did not succeed count, by what the gateway said: `1 charged $0.40, as the gateway said; ...`. */
export function unsuccessfulParts(u: UnsuccessfulSpend): string {
  return [
    ...(u.charged ? [`${u.charged} charged ${formatUsd(u.charged_usd)}, as the gateway said`] : []),
    ...(u.not_charged ? [`${u.not_charged} not charged, as the gateway said`] : []),
    ...(u.estimated ? [`${u.estimated} estimated at ${formatUsd(u.estimated_usd)} (${NO_CHARGE_TO_GO_BY})`] : []),
  ].join('; ');
}

function unsuccessfulText(u: UnsuccessfulSpend): string {
  return `  of which ${u.renders} render${u.renders === 1 ? '' : 's'} that did not succeed: ${unsuccessfulParts(u)}`;
}

function spentText(s: Omit<ModelSpend, 'model' | 'estimate_usd'>, estimate: number | null): string {
  const against = estimate === null ? 'with no estimate (no price)' : `of ${formatUsd(estimate)} estimated`;
  // Only prompt rewrites are priced from usage: the part is shown where there is some.
  const usage = s.usage_usd > 0 ? `, ${formatUsd(s.usage_usd)} from usage` : '';
  return `${formatUsd(s.spent_usd)} (${formatUsd(s.billed_usd)} billed${usage}, ${formatUsd(s.estimated_usd)} estimated) ${against}`;
}

/** For people: the total, then one line per model, then what the renders that did not succeed count. */
export function spendLines(spend: JobSpend, label = 'spent:   '): string[] {
  return [
    `${label} ${spentText(spend, spend.estimate_usd)}`,
    ...spend.per_model.map((m) => `  ${m.model}: ${spentText(m, m.estimate_usd)}`),
    ...(spend.unsuccessful ? [unsuccessfulText(spend.unsuccessful)] : []),
  ];
}

/**
 * For the end of a run that earlier runs paid before (a redo, `--only`, a re-run after an edit):
 * this run's spend beside its own estimate, then the job's, every run of its items, with no
 * estimate beside it (this run's plan prices this run only).
 */
export function runSpendLines(run: JobSpend, job: JobSpend, label = 'this run:'): string[] {
  const usage = job.usage_usd > 0 ? `, ${formatUsd(job.usage_usd)} from usage` : '';
  return [
    ...spendLines(run, label),
    `the job:  ${formatUsd(job.spent_usd)} (${formatUsd(job.billed_usd)} billed${usage}, ${formatUsd(job.estimated_usd)} estimated), every run of its items`,
  ];
}

/**
 * What a job has spent so far, for `status` of a running job: its manifest's cost_usd beside the
 * estimate with the job file's prices. Undefined when nothing is priced or recorded, or when the job
 * file or its output cannot be read now (status still shows the progress). `status --watch` asks
 * every second or two: the rewrite records (one read per item) are read again after
 * RECORDS_FRESH_MS only, and the rows of each round decide which of their calls count.
 */
export async function spendSoFar(plan: Plan): Promise<JobSpend | undefined> {
  try {
    const rows = await readManifestRows(openStorage(plan.output));
    return spendOf(rows, estimatePlan(plan), notInRows(await recentRewriteCalls(plan), rows));
  } catch {
    return undefined;
  }
}

const RECORDS_FRESH_MS = 30_000;
let recentCalls: { output: string; at: number; calls: UnrecordedRewrite[] } | undefined;

/** The paid rewrite calls of the plan's records, read again after RECORDS_FRESH_MS only (status --watch, the review page). */
export async function recentRewriteCalls(plan: Pick<Plan, 'items' | 'enhance' | 'output'>): Promise<UnrecordedRewrite[]> {
  const output = JSON.stringify(plan.output);
  if (recentCalls?.output === output && Date.now() - recentCalls.at < RECORDS_FRESH_MS) return recentCalls.calls;
  let calls: UnrecordedRewrite[];
  try {
    calls = await rewriteCallsOf(plan);
  } catch (error) {
    // A read that fails now (a storage hiccup) keeps the last one read, as a page shown a moment ago did.
    if (recentCalls?.output === output) return recentCalls.calls;
    throw error;
  }
  recentCalls = { output, at: Date.now(), calls };
  return calls;
}

/**
 * The spend of a job: its manifest rows, and the paid rewrites of its items that no row counts
 * (read from the rewrite records beside the outputs, one per item, for a job with `enhance:`).
 */
export async function jobSpend(
  plan: Pick<Plan, 'items' | 'enhance' | 'output'>,
  rows: readonly ManifestRow[],
  estimate: PlanEstimate,
): Promise<JobSpend | undefined> {
  return spendOf(rows, estimate, await unrecordedRewriteCalls(plan, rows));
}

/**
 * This run's part of a job's spend (docs/costs.md): the rows that ended at or after `since`, its
 * job's start as its workflow recorded it (JobResult startedAt), and the paid rewrite calls no row
 * counts made since then; beside the estimate of the plan's items this run rendered or left to
 * render (their latest row is its own, or they have none), not the ones an earlier run had done.
 * Undefined when nothing was paid before it: this run's spend is then the job's. The rows'
 * `finished_at` is their render workflow's clock, the same server's as the job's start, and the job
 * workflow carries its start across a killed and re-attached `run`, so the split holds there too.
 */
export function spendSince(
  plan: Pick<Plan, 'items' | 'enhance' | 'pricing'>,
  rows: readonly ManifestRow[],
  calls: readonly UnrecordedRewrite[],
  since: number,
): JobSpend | undefined {
  // A time that is not one (a row from someone else's tool) is no time of this run's.
  const ofThisRun = (at: string) => Date.parse(at) >= since;
  const earlier = ledger(
    rows.filter((row) => !ofThisRun(row.finished_at)),
    calls.filter((call) => !ofThisRun(call.at)),
  );
  if (earlier.length === 0) return undefined;
  const latest = latestRowByKey(rows);
  const items = plan.items.filter((item) => {
    const row = latest.get(item.key);
    return row === undefined || ofThisRun(row.finished_at);
  });
  return spendOf(
    rows.filter((row) => ofThisRun(row.finished_at)),
    estimatePlan({ ...plan, items }),
    calls.filter((call) => ofThisRun(call.at)),
  );
}

/** The paid rewrite calls of the plan's items that no row counts (docs/costs.md "Rewrites no row counts"). */
export async function unrecordedRewriteCalls(
  plan: Pick<Plan, 'items' | 'enhance' | 'output'>,
  rows: readonly ManifestRow[],
): Promise<UnrecordedRewrite[]> {
  return notInRows(await rewriteCallsOf(plan), rows);
}

/** Every paid rewrite call the records of the plan's items keep; none for a job without `enhance:`. */
export function rewriteCallsOf(plan: Pick<Plan, 'items' | 'enhance' | 'output'>): Promise<UnrecordedRewrite[]> {
  if (!plan.enhance) return Promise.resolve([]);
  return rewriteCalls(new RewriteStore(openStorage(plan.output)));
}

/** The spend lines for a listing (`status`, `results`): none when nothing is priced or recorded. */
export function spendSummaryLines(spend: JobSpend | undefined): string[] {
  return spend ? spendLines(spend) : [];
}

/**
 * One row's whole cost for a table cell, its create's and its prompt rewrite's: `$0.40 billed`,
 * `$0.04 est.`; named by its least certain part (`est.` when a part is an estimate; `usage` for a
 * rewrite alone priced from its usage); `not charged` for a create the gateway billed at nothing
 * (a failed render it did not charge: `$0.00 billed` read as a price); `-` when the row records none.
 */
export function rowCostText(row: Pick<ManifestRow, 'cost_usd' | 'cost_source' | 'rewrite_cost_usd' | 'rewrite_cost_source'>): string {
  const total = rowTotalUsd(row);
  if (total === undefined) return '-';
  const { costUsd, rewriteCostUsd } = trustedCosts(row);
  const notCharged = costUsd === 0 && row.cost_source === 'billed';
  if (notCharged && rewriteCostUsd === undefined) return 'not charged';
  const sources = [
    ...(costUsd !== undefined && !notCharged ? [row.cost_source ?? 'estimated'] : []),
    ...(rewriteCostUsd !== undefined ? [row.rewrite_cost_source ?? 'estimated'] : []),
  ];
  const named = sources.includes('estimated') ? 'est.' : sources.includes('billed') ? 'billed' : 'usage';
  return `${formatUsd(total)} ${named}`;
}

/** The row's prompt rewrite's part of its cost for a table cell: `$0.00017 usage`, `$0.0063 est.`; `-` without one. */
export function rowRewriteCostText(row: Pick<ManifestRow, 'rewrite_cost_usd' | 'rewrite_cost_source'>): string {
  const { rewriteCostUsd } = trustedCosts(row);
  if (rewriteCostUsd === undefined) return '-';
  return `${formatUsd(rewriteCostUsd)} ${row.rewrite_cost_source === 'usage' ? 'usage' : 'est.'}`;
}

/** What this run of the item cost in all, its create and its prompt rewrite (USD); undefined when the row records neither amount. */
export function rowTotalUsd(row: Pick<ManifestRow, 'cost_usd' | 'rewrite_cost_usd'>): number | undefined {
  const { costUsd, rewriteCostUsd } = trustedCosts(row);
  if (costUsd === undefined && rewriteCostUsd === undefined) return undefined;
  return roundUsd((costUsd ?? 0) + (rewriteCostUsd ?? 0));
}
