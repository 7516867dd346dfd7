// The estimate a job's plan costs, before anything is sent: per model and in total, with the items
// that have no price counted and their models named. `validate` (offline), `run --dry-run`, `run`
// and `doctor` (with the gateway's published prices beneath) print it; `--json` carries it. See
// docs/costs.md.
import { withPublishedPrices, type PublishedPrices } from '../gateway';
import { userPricesPath, type UserPrices } from '../jobfile';
import type { Plan } from '../jobfile/plan';
import { estimateEnhanceUsd, estimateItemUsd, roundUsd, type PriceTable } from '../jobfile/prices';
import { modelsUsed } from '../jobfile/pricing';
import { openStorage } from '../storage';
import { recordJobPrices } from '../storage/job-prices';
import { StorageError } from '../storage/storage';
import { InfrastructureError } from './errors';
import { disallowedKeyUses, parseAllowKeys } from './keys';
import { plainText } from './terminal-text';

// Which models a budget cannot price, and the refusal that names them: asked by run, validate and doctor.
export { unpricedMessage, unpricedModels } from '../activities/plan';

/**
 * The prices the user brings to a job file: `--prices FILE`, the prices file in the user's settings
 * (they outrank the job file's: docs/costs.md), and `run --budget`, under which a job file's $0 for a
 * model the user has not priced is refused.
 */
export function userPrices(options: { prices?: string; budget?: number }): UserPrices {
  return {
    ...(options.prices !== undefined ? { pricesFile: options.prices } : {}),
    userPricesFile: userPricesPath(),
    ...(options.budget !== undefined ? { budgetUsd: options.budget } : {}),
  };
}

export interface ModelEstimate {
  model: string;
  /** `video`: creates; `enhance`: prompt rewrites through Messages (an upper bound). */
  role: 'video' | 'enhance';
  /** Calls to this model: one per item. */
  items: number;
  priced_items: number;
  usd: number;
  /** Where the price came from (`job file`, `prices.json (gemini/veo-3.1-fast-generate-001)`); null when unpriced. */
  source: string | null;
  /** Items sent without seconds and priced at an assumed length: `{seconds: items}`. */
  assumed_seconds: Record<string, number>;
}

export interface UnpricedModel {
  model: string;
  items: number;
  /** Why, for the first unpriced item of the model. */
  reason: string;
}

export interface PlanEstimate {
  currency: 'USD';
  /** The priced part only: with unpriced items, the job costs more. */
  total: number;
  per_model: ModelEstimate[];
  /** Items with a create or rewrite that has no price. */
  unpriced_items: number;
  unpriced_models: UnpricedModel[];
}

export function estimatePlan(plan: Pick<Plan, 'items' | 'enhance' | 'pricing'>): PlanEstimate {
  const table = plan.pricing ?? {};
  const rows = new Map<string, ModelEstimate>();
  const unpriced = new Map<string, UnpricedModel>();
  let unpricedItems = 0;
  const row = (model: string, role: ModelEstimate['role']): ModelEstimate => {
    const key = `${role}\u0000${model}`;
    let r = rows.get(key);
    if (!r) {
      r = { model, role, items: 0, priced_items: 0, usd: 0, source: null, assumed_seconds: {} };
      rows.set(key, r);
    }
    return r;
  };
  const count = (r: ModelEstimate, estimate: ReturnType<typeof estimateItemUsd>): boolean => {
    r.items++;
    if ('unpriced' in estimate) {
      const u = unpriced.get(r.model) ?? { model: r.model, items: 0, reason: estimate.unpriced };
      u.items++;
      unpriced.set(r.model, u);
      return false;
    }
    r.priced_items++;
    r.usd = roundUsd(r.usd + estimate.usd);
    r.source = estimate.source;
    if (estimate.assumedSeconds !== undefined) {
      const s = String(estimate.assumedSeconds);
      r.assumed_seconds[s] = (r.assumed_seconds[s] ?? 0) + 1;
    }
    return true;
  };
  for (const item of plan.items) {
    let priced = count(row(item.request.model, 'video'), estimateItemUsd(table, item.request));
    if (plan.enhance)
      priced = count(row(plan.enhance.model, 'enhance'), estimateEnhanceUsd(table, plan.enhance, item.request.prompt)) && priced;
    if (!priced) unpricedItems++;
  }
  // Creates first, in the order the plan names their models; rewrites after.
  const perModel = [...rows.values()].sort((a, b) => (a.role === b.role ? 0 : a.role === 'video' ? -1 : 1));
  return {
    currency: 'USD',
    total: roundUsd(perModel.reduce((sum, r) => sum + r.usd, 0)),
    per_model: perModel,
    unpriced_items: unpricedItems,
    unpriced_models: [...unpriced.values()],
  };
}

/** `$12.40`; amounts under a cent keep their first significant digits (`$0.0063`). */
export function formatUsd(usd: number): string {
  if (usd === 0 || usd >= 0.01) return `$${usd.toFixed(2)}`;
  return `$${usd.toPrecision(2).replace(/0+$/, '')}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The estimate for people: one line per model, the total, what was assumed, what has no price. */
export function estimateLines(estimate: PlanEstimate, budget?: { maxUsd: number }): string[] {
  const lines: string[] = [];
  const items = estimate.per_model.filter((r) => r.role === 'video').reduce((n, r) => n + r.items, 0);
  if (estimate.per_model.every((r) => r.priced_items === 0)) {
    // Nothing priced at all: one line that names the models, not a table of dashes.
    const models = estimate.unpriced_models.map((u) => `${u.model} (${plural(u.items, 'item')})`).join(', ');
    lines.push(`estimate: none, no prices for ${models}; add pricing to the job file, or pricing_file / --prices (docs/costs.md)`);
    if (budget) lines.push(`budget:   ${formatUsd(budget.maxUsd)}`);
    return lines;
  }
  const priced = items - estimate.unpriced_items;
  lines.push(
    `estimate: ${formatUsd(estimate.total)} (USD) for ${priced} of ${plural(items, 'item')}` +
      (estimate.unpriced_items > 0 ? `; ${estimate.unpriced_items} without a price, not counted` : ''),
  );
  const width = Math.max(...estimate.per_model.map((r) => formatUsd(r.usd).length), 5);
  for (const r of estimate.per_model) {
    const what = r.role === 'enhance' ? `${plural(r.items, 'rewrite')} (enhance, at most max_tokens each)` : plural(r.items, 'item');
    const source = r.source ? `, price from ${r.source}` : '';
    const cost = r.priced_items > 0 ? formatUsd(r.usd) : '-';
    const partly = r.priced_items > 0 && r.priced_items < r.items ? ` (${r.priced_items} priced)` : '';
    lines.push(`  ${cost.padStart(width)}  ${r.model}: ${what}${partly}${source}`);
    for (const [seconds, n] of Object.entries(r.assumed_seconds)) {
      lines.push(`  ${''.padStart(width)}    ${plural(n, 'item')} without seconds, assumed ${seconds} s (an assumption: set seconds)`);
    }
  }
  for (const u of estimate.unpriced_models) {
    lines.push(`  no price: ${u.model} (${plural(u.items, 'item')}): ${u.reason}; add it to pricing in the job file or a prices file`);
  }
  if (budget) {
    const over = estimate.total > budget.maxUsd ? `; the estimate is above it` : '';
    lines.push(`budget:   ${formatUsd(budget.maxUsd)}${over}`);
  }
  return lines;
}

/** Where the gateway's published prices came from, for `--json` (docs/costs.md). */
export interface GatewayPricesNote {
  /** The base address whose prices were read; null when none published any (or none was asked). */
  base: string | null;
  gateway: PublishedPrices['gateway'] | null;
  /** The models asked for: those the job file and its prices files do not price. */
  asked: string[];
  /** The asked models it priced. */
  priced: string[];
  /** Why an asked model stays unpriced, or why nothing was read. */
  notes: string[];
}

/**
 * Adds the gateway's published prices beneath the plan's own (job file, then prices files: those
 * win), for the models they leave unpriced; `plan.pricing` is replaced. Returns the prices taken
 * from the gateway (for the job's budget: JobInput.gatewayPrices) and what to tell. One bounded
 * read per base address; nothing is read when every model has a price.
 */
export async function addGatewayPrices(plan: Plan, key: string | undefined): Promise<{ taken: PriceTable; note: GatewayPricesNote }> {
  const used = modelsUsed(plan.items, plan.enhance?.model);
  const { table, asked, published } = await withPublishedPrices(plan.pricing, used, plan.gateway.baseUrls, key ? { key } : {});
  const note: GatewayPricesNote = { base: null, gateway: null, asked, priced: [], notes: [] };
  if (asked.length === 0) return { taken: {}, note };
  plan.pricing = table;
  note.base = published.base ?? null;
  note.gateway = published.gateway ?? null;
  note.priced = Object.keys(published.prices).sort();
  note.notes = [...Object.values(published.unpriced), ...published.notes];
  if (!key && !published.base) note.notes.push('LiteLLM publishes its prices to the key only: set the key variable to read them');
  return { taken: published.prices, note };
}

/** The gateway's side of the estimate for people: which address priced what, or why none did. */
export function gatewayPricesLines(note: GatewayPricesNote): string[] {
  if (note.asked.length === 0) return [];
  if (!note.base) return [`gateway prices: none read (${plainText(note.notes.join('; ')).slice(0, 400)})`];
  const lines = [
    `gateway prices: ${note.priced.length ? note.priced.join(', ') : 'none of the models asked'}, from ${note.gateway} at ${note.base}`,
  ];
  for (const n of note.notes) lines.push(`  ${plainText(n)}`);
  return lines;
}

/**
 * The key to read the gateway's prices with: the job's key variable, unless the user's key rule
 * does not allow it at the job's gateway addresses (docs/keys.md); then none (new-api's prices need none).
 */
export function keyForPrices(plan: Plan, allowKey: readonly string[] = []): string | undefined {
  return disallowedKeyUses(plan, parseAllowKeys([...allowKey])).length === 0 ? process.env[plan.gateway.apiKeyEnv] || undefined : undefined;
}

/**
 * What `run` says before it starts: the gateway's prices read beneath the job's, and the estimate
 * with where each price came from. Nothing when the job has no price anywhere and no budget.
 */
export async function estimateForRun(plan: Plan, key: string | undefined): Promise<string[]> {
  const { note } = await addGatewayPrices(plan, key);
  const estimate = estimatePlan(plan);
  if (!plan.budget && estimate.per_model.every((m) => m.priced_items === 0)) return [];
  return [...estimateLines(estimate, plan.budget), ...gatewayPricesLines(note)];
}

/**
 * The prices `run` priced the job with, recorded beside its manifest before the job starts
 * (storage/job-prices.ts), so that status, results and the report show this estimate later without
 * asking the gateway (docs/costs.md). The output cannot be written: exit 3, nothing started.
 */
export async function recordRunPrices(plan: Plan): Promise<void> {
  try {
    await recordJobPrices(openStorage(plan.output), plan.pricing ?? {}, modelsUsed(plan.items, plan.enhance?.model));
  } catch (error) {
    if (error instanceof StorageError) throw new InfrastructureError(`${plan.job}: its prices could not be recorded: ${error.message}`);
    throw error;
  }
}
