// The estimate a job's plan costs, before anything is sent: per model and in total, with the items
// that have no price counted and their models named. `validate`, `run --dry-run` (and later
// `doctor`) print it; `--json` carries it. See docs/costs.md.
import type { Plan } from '../jobfile/plan';
import { estimateEnhanceUsd, estimateItemUsd, roundUsd } from '../jobfile/prices';

export interface ModelEstimate {
  model: string;
  /** `video`: creates; `enhance`: prompt rewrites through Messages (an upper bound). */
  role: 'video' | 'enhance';
  /** Calls to this model: one per item. */
  items: number;
  priced_items: number;
  usd: number;
  /** Where the price came from (`job file`, `prices.json (openai/sora-2)`); null when unpriced. */
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
