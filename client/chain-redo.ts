// What a redo of shots means for the shots that continue them (docs/chains.md): a redone shot has a
// new last frame, so every later shot that starts from it (or from a shot that does, and so on) now
// starts from a different frame. A redo renders none of them unless asked; this says which they are
// and what rendering them again would cost, for `run --redo` to print.
import type { PlanItem } from '../jobfile/plan';
import { estimateItemUsd, type PriceTable } from '../jobfile/prices';

export interface ChangedStarts {
  /** The later shots whose input changes, in plan order, each with the redone shot it follows from. */
  shots: Array<{ key: string; from: string }>;
  /** What rendering them all again would cost, USD; absent when one of them has no price. */
  usd?: number;
}

/**
 * The items that send something of a redone item (its frame, a frame, its video), directly or
 * through another such item. `after:` passes nothing, so it changes no input.
 */
export function startsChangedByRedo(items: readonly PlanItem[], redone: readonly string[], prices: PriceTable): ChangedStarts {
  const changedFrom = new Map<string, string>(redone.map((key) => [key, key]));
  const shots: ChangedStarts['shots'] = [];
  // The plan lists needs first, so one pass sees every shot's needs decided.
  for (const item of items) {
    if (changedFrom.has(item.key)) continue;
    const need = item.needs?.find((n) => n.use !== 'after' && changedFrom.has(n.key));
    if (!need) continue;
    const from = changedFrom.get(need.key)!;
    changedFrom.set(item.key, from);
    shots.push({ key: item.key, from });
  }
  let usd: number | undefined = 0;
  for (const shot of shots) {
    const estimate = estimateItemUsd(prices, items.find((i) => i.key === shot.key)!.request);
    usd = usd !== undefined && 'usd' in estimate ? usd + estimate.usd : undefined;
  }
  return { shots, ...(usd !== undefined ? { usd: Math.round(usd * 100) / 100 } : {}) };
}

/** `3 later shots now start from a different frame: shot-3, shot-4, shot-5 (about $1.20 to render again; --only them to do it)`. */
export function describeChangedStarts(changed: ChangedStarts): string[] {
  if (changed.shots.length === 0) return [];
  const keys = changed.shots.map((s) => s.key);
  const cost = changed.usd !== undefined ? `about $${changed.usd.toFixed(2)} to render again` : 'not priced';
  return [
    `${keys.length} later shot(s) now start from a different frame: ${keys.join(', ')} (${cost}); they are not rendered again unless asked (run --redo with --only ${keys.join(',')})`,
  ];
}
