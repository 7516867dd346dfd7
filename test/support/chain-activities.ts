// The worker's activities with plan pages that carry needs (docs/chains.md), for tests that run a
// chain before the job file can say `image: {last_frame_of: ...}`: everything after the page, the
// job window, the creates and their frames, is the real code.
import * as activities from '../../activities/definitions';
import { storageFor } from '../../activities/context';
import { withNeedsMet, type PageItem } from '../../activities/plan';
import type { ItemNeed } from '../../jobfile/chains';

/** What each item needs, by key; the keys another item needs get neededBy. */
export type ChainSpec = Record<string, ItemNeed[]>;

/** A chain of `n` shots `prefix-1..n`, prompts `prefix 1..n`: shot k starts from the last frame of shot k-1. */
export function chainOf(prefix: string, n: number): { shots: Array<{ id: string; prompt: string }>; needs: ChainSpec } {
  const shots = Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i + 1}`, prompt: `${prefix} ${i + 1}` }));
  const needs: ChainSpec = {};
  for (let k = 1; k < n; k++) needs[shots[k]!.id] = [{ key: shots[k - 1]!.id, use: 'last_frame', role: 'first_frame' }];
  return { shots, needs };
}

/** The real activities, the plan's pages given `spec`'s needs as the job file's expansion would. */
export function chainedActivities(spec: () => ChainSpec): typeof activities {
  return {
    ...activities,
    async readPlanItems(input: Parameters<typeof activities.readPlanItems>[0]) {
      const page = await activities.readPlanItems(input);
      const all = spec();
      const needed = new Set(Object.values(all).flatMap((needs) => needs.map((n) => n.key)));
      const items: PageItem[] = page.items.map((item) => ({
        ...item,
        ...(all[item.key] ? { needs: all[item.key] } : {}),
        ...(needed.has(item.key) ? { neededBy: true } : {}),
      }));
      // What the page does with needs (their outputs from earlier runs, what the create sends).
      await withNeedsMet(items, storageFor(input.output));
      return { ...page, items };
    },
  };
}
