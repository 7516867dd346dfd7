// Chains of shots (docs/chains.md): items that need other items of their job, by id. The shared
// types (workflows/ import them; types only there), and the pure graph checks the loader runs before
// expanding anything: unknown ids, cycles, and the order the plan lists items in.
import type { ItemSource } from './sources';

/** How an item uses another item of its job (docs/chains.md). */
export type NeedUse = 'last_frame' | 'frame' | 'video' | 'after';
export type FrameRole = 'first_frame' | 'last_frame' | 'reference_image';
/** One thing an item waits on: another item of the same plan, by its item key. */
export interface ItemNeed {
  /** The item key of the item it needs, resolved within the same matrix combination (take 1, or the kept take once picks exist). */
  key: string;
  use: NeedUse;
  /** Seconds into the needed item's video, for `use: 'frame'`. */
  at?: number;
  /** The role the frame is sent as (default first_frame); absent for 'video' and 'after'. */
  role?: FrameRole;
}
/** A job-level assembly (`assemble:`): the item keys in order, cut into one file. */
export interface AssemblySpec {
  name: string;
  keys: string[];
  crossfadeSec?: number;
}

/** The frame roles a model may take besides `reference_image` (`models.<m>.frames`). */
export const FRAME_ROLES = ['first_frame', 'last_frame'] as const;
export type FrameOnlyRole = (typeof FRAME_ROLES)[number];

/** One reference of the job file that names another item, as written (`image: {last_frame_of: shot-1}`). */
export interface WrittenNeed {
  use: Exclude<NeedUse, 'after'>;
  /** The id of the item it needs. */
  of: string;
  /** Seconds, for `frame_of`. */
  at?: number;
}

/** The value of an `image:`/`video:` key when it names another item; undefined for a URL or path. */
export function writtenNeedOf(value: unknown): WrittenNeed | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as { last_frame_of?: string; frame_of?: string; at?: number; output_of?: string };
  if (v.last_frame_of !== undefined) return { use: 'last_frame', of: v.last_frame_of };
  if (v.frame_of !== undefined) return { use: 'frame', of: v.frame_of, at: v.at };
  if (v.output_of !== undefined) return { use: 'video', of: v.output_of };
  return undefined;
}

/** `4.5s`, `500ms`, `2` (seconds): a time in seconds, or undefined when it is not one. */
export function parseSeconds(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s)?\s*$/.exec(value);
  if (!m) return undefined;
  const n = Number(m[1]);
  return m[2] === 'ms' ? n / 1000 : n;
}

/** Every id an item source names (its chain references and `after`), each with where it is written. */
export function namedIds(src: ItemSource): { id: string; at: (string | number)[] }[] {
  const out: { id: string; at: (string | number)[] }[] = [];
  (src.item.references ?? []).forEach((ref, j) => {
    for (const kind of ['image', 'video'] as const) {
      const need = writtenNeedOf(ref[kind]);
      if (!need) continue;
      const key = need.use === 'last_frame' ? 'last_frame_of' : need.use === 'frame' ? 'frame_of' : 'output_of';
      out.push({ id: need.of, at: ['references', j, kind, key] });
    }
  });
  (src.item.after ?? []).forEach((id, j) => out.push({ id, at: ['after', j] }));
  return out;
}

/**
 * The sources in the order the plan lists them: every item after the items it names, file order
 * otherwise (a stable topological sort). Reports unknown ids and cycles (naming their ids in order),
 * each where it is written; on either, the file order is kept (nothing is run anyway).
 */
export function orderByNeeds(
  sources: readonly ItemSource[],
  report: (src: ItemSource, at: (string | number)[], message: string) => void,
): ItemSource[] {
  const byId = new Map<string, number>();
  sources.forEach((src, i) => {
    const id = src.item.id;
    if (id !== undefined && !byId.has(id)) byId.set(id, i);
  });
  const known = [...byId.keys()];
  const edges: number[][] = sources.map(() => []);
  let bad = false;
  sources.forEach((src, i) => {
    for (const { id, at } of namedIds(src)) {
      const j = byId.get(id);
      if (j === undefined) {
        report(src, at, `no item has the id "${id}"${knownIds(known)}`);
        bad = true;
      } else if (!edges[i]?.includes(j)) edges[i]?.push(j);
    }
  });
  const cycle = findCycle(edges);
  if (cycle) {
    const names = cycle.map((i) => sources[i]?.item.id ?? '?');
    const first = sources[cycle[0] as number] as ItemSource;
    const next = names[1] ?? names[0];
    const at = namedIds(first).find((n) => n.id === next)?.at ?? [];
    report(first, at, `a cycle: ${[...names, names[0]].join(' -> ')}; an item cannot wait, even through others, on itself`);
    bad = true;
  }
  if (bad) return [...sources];
  return stableTopological(sources, edges);
}

function knownIds(known: readonly string[]): string {
  if (known.length === 0) return ': no item of the job has an id; give the item it means one';
  const shown = known.slice(0, 10).join(', ');
  return `; ids of the job: ${shown}${known.length > 10 ? `, … (${known.length} in all)` : ''}`;
}

/** The first cycle found (indices in order, each needing the next), or undefined. Iterative: a chain may be long. */
function findCycle(edges: readonly number[][]): number[] | undefined {
  const state = new Uint8Array(edges.length); // 0 new, 1 on the path, 2 done
  for (let root = 0; root < edges.length; root++) {
    if (state[root] !== 0) continue;
    const path: number[] = [root];
    const next: number[] = [0];
    state[root] = 1;
    while (path.length > 0) {
      const depth = path.length - 1;
      const i = path[depth] as number;
      const e = edges[i] ?? [];
      const k = next[depth] as number;
      if (k >= e.length) {
        state[i] = 2;
        path.pop();
        next.pop();
        continue;
      }
      next[depth] = k + 1;
      const j = e[k] as number;
      if (state[j] === 1) return path.slice(path.indexOf(j));
      if (state[j] === 0) {
        state[j] = 1;
        path.push(j);
        next.push(0);
      }
    }
  }
  return undefined;
}

/** Kahn's order, always taking the earliest source in the file whose needs are all placed (a heap of ready ones). */
function stableTopological(sources: readonly ItemSource[], edges: readonly number[][]): ItemSource[] {
  if (edges.every((e) => e.length === 0)) return [...sources];
  const waiting = edges.map((e) => e.length);
  const dependents: number[][] = sources.map(() => []);
  edges.forEach((e, i) => e.forEach((j) => dependents[j]?.push(i)));
  const ready = new MinHeap();
  waiting.forEach((w, i) => w === 0 && ready.push(i));
  const out: ItemSource[] = [];
  for (let i = ready.pop(); i !== undefined; i = ready.pop()) {
    out.push(sources[i] as ItemSource);
    for (const d of dependents[i] ?? []) if (--(waiting[d] as number) === 0) ready.push(d);
  }
  return out;
}

class MinHeap {
  private readonly a: number[] = [];
  push(v: number): void {
    const a = this.a;
    a.push(v);
    for (let i = a.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if ((a[p] as number) <= v) break;
      a[i] = a[p] as number;
      a[p] = v;
      i = p;
    }
  }
  pop(): number | undefined {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    a[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && (a[l] as number) < (a[m] as number)) m = l;
      if (r < a.length && (a[r] as number) < (a[m] as number)) m = r;
      if (m === i) break;
      [a[i], a[m]] = [a[m] as number, a[i] as number];
      i = m;
    }
    return top;
  }
}
