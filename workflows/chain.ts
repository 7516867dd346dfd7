// The job window's "not ready yet" set (docs/chains.md): an item whose needs have not all succeeded
// waits here while the window goes on with the items behind it; it is handed back once every need
// succeeded, or ended `blocked` once one ended otherwise. Pure bookkeeping over what the job
// carries across continue-as-new; workflows/job.ts decides when to start what it hands back.
import type { PageItem } from '../activities/plan';
import type { ItemEndState } from '../domain/end-states';
import type { ChainCarry } from './types';

/** Items waiting at once, at most: the carry stays small, and the window reads no further ahead meanwhile. */
export const MAX_WAITING = 100;

/** What an item's needs say now. */
export type Readiness = { ready: true } | { ready: false; waitsOn: string } | { blockedBy: string; why: string };

export class NeedsWindow {
  constructor(
    private readonly carry: ChainCarry,
    /** The keys of the items in flight now. */
    private readonly inFlightKeys: () => Iterable<string>,
  ) {}

  get waiting(): readonly PageItem[] {
    return this.carry.waiting;
  }

  full(): boolean {
    return this.carry.waiting.length >= MAX_WAITING;
  }

  /**
   * An item without needs is ready. A need is met when it succeeded in this job (this run or an
   * earlier one continued as new) or in an earlier run of the job, its output still stored (the
   * page's needsMet); it is pending while it is in flight or waits itself. Any other need ended
   * otherwise, or was left unrendered by this run (a failed item not retried): the item is blocked.
   */
  readiness(item: PageItem): Readiness {
    let waitsOn: string | undefined;
    const inFlight = new Set(this.inFlightKeys());
    for (const need of item.needs ?? []) {
      const ended = this.carry.outcomes[need.key];
      if (ended?.state === 'succeeded' || item.needsMet?.includes(need.key)) continue;
      if (ended) return { blockedBy: ended.blockedBy ?? need.key, why: describe(need.key, ended) };
      const queued = (w: PageItem) => w.key === need.key;
      if (inFlight.has(need.key) || this.carry.waiting.some(queued) || this.carry.ready.some(queued)) {
        waitsOn ??= need.key;
        continue;
      }
      return { blockedBy: need.key, why: `${need.key} did not succeed in an earlier run (run --retry-failed renders it again)` };
    }
    return waitsOn === undefined ? { ready: true } : { ready: false, waitsOn };
  }

  /** The need an item in the set waits on now, for status. */
  waitsOn(item: PageItem): string {
    const now = this.readiness(item);
    return 'waitsOn' in now ? now.waitsOn : 'blockedBy' in now ? now.blockedBy : '';
  }

  hold(item: PageItem): void {
    this.carry.waiting.push(item);
  }

  /** Keeps the outcome of an item a later one needs; the others' are not kept. */
  ended(item: Pick<PageItem, 'key' | 'neededBy'>, state: ItemEndState, blockedBy?: string): void {
    if (!item.neededBy) return;
    this.carry.outcomes[item.key] = { state, ...(blockedBy !== undefined ? { blockedBy } : {}) };
  }

  /**
   * The waiting items whose needs are all met now, and those one of whose needs ended otherwise,
   * both taken out of the set, in plan order. A blocked item that is itself needed blocks its own
   * dependents once the caller reports it (ended), so a chain is ended to its last item.
   */
  settle(): { ready: PageItem[]; blocked: Array<{ item: PageItem; blockedBy: string; why: string }> } {
    const ready: PageItem[] = [];
    const blocked: Array<{ item: PageItem; blockedBy: string; why: string }> = [];
    const still: PageItem[] = [];
    for (const item of this.carry.waiting) {
      const now = this.readiness(item);
      if ('blockedBy' in now) blocked.push({ item, blockedBy: now.blockedBy, why: now.why });
      else if (now.ready) ready.push(item);
      else still.push(item);
    }
    this.carry.waiting = still;
    return { ready, blocked };
  }
}

function describe(key: string, ended: { state: ItemEndState; blockedBy?: string }): string {
  if (ended.state === 'blocked') return `${key} was blocked by ${ended.blockedBy ?? 'an item it needs'}`;
  return `${key} ended ${ended.state}`;
}
