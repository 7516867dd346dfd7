// The chain part of expansion (docs/chains.md): what each item's model takes, its needs resolved to
// item keys within its matrix combination, the plan's `neededBy` and `return_last_frame`, and the
// job's `assemble:` films. expand.ts calls these; they report at file:line like every other check.
import type { AssemblySpec, FrameRole, ItemNeed, WrittenNeed } from './chains';
import type { Ctx } from './context';
import { modelCapabilities, type ModelCapabilities } from './capabilities';
import { comboSuffix } from './keys';
import type { Scalar } from './matrix';
import type { AssetKind, PlanItem, Protocol } from './plan';
import type { JobFileData } from './schema';
import { baseKeyOf } from './takes';
import { parseSeconds } from './chains';

/** An item as later items see it: per full matrix combination, its first take's key and definition. */
export interface ResolvedItem {
  /** The first take's key. */
  key: string;
  /** A hash of its resolved request and, through theirs, of everything it needs (a dependent's key hashes it). */
  definition: string;
  /** Its requested length in seconds, when the item sets one. */
  seconds?: number;
}

/** Resolved items by id, then by full matrix combination (`comboSignature`). */
export type ChainRegistry = Map<string, Map<string, ResolvedItem>>;

export function comboSignature(combo: ReadonlyMap<string, Scalar>): string {
  return [...combo].map(([k, v]) => `${k}=${String(v)}`).join('\u0000');
}

/** One reference of an item as the checks see it: written or naming another item. */
export interface CheckedRef {
  kind: AssetKind;
  role: string;
  /** Where it is written, inside the item (or defaults). */
  at: (string | number)[];
  report: (at: (string | number)[], message: string) => void;
}

const FRAMES = new Set(['first_frame', 'last_frame']);

/**
 * The roles of one item's references against what its model and protocol take: a frame role the
 * model does not take, more than one of a frame, frames mixed with reference media for a model that
 * refuses it, and what the openai protocol cannot carry (it sends one image, as the first frame).
 */
export function checkFrameRoles(data: JobFileData, model: string, protocol: Protocol, refs: readonly CheckedRef[]): void {
  if (!refs.some((r) => FRAMES.has(r.role))) return;
  const caps = modelCapabilities(data, model, protocol);
  const seen = new Map<string, CheckedRef>();
  for (const ref of refs) {
    if (!FRAMES.has(ref.role)) continue;
    const first = seen.get(ref.role);
    if (first) ref.report(ref.at, `an item takes one ${ref.role}; ${label(first.at.slice(0, 2))} is one already`);
    seen.set(ref.role, ref);
    if (protocol === 'openai' && ref.role === 'last_frame') {
      ref.report(
        ref.at,
        `the openai protocol sends one image, as input_reference (the first frame); it cannot carry a last_frame (model ${model})`,
      );
    } else if (!(caps.frames as readonly string[]).includes(ref.role)) {
      const takes = caps.frames.length > 0 ? caps.frames.join(', ') : 'none';
      ref.report(ref.at, `model ${model} does not take a ${ref.role} (frames it takes: ${takes}; ${caps.source.frames})`);
    }
  }
  const frame = refs.find((r) => FRAMES.has(r.role));
  if (!frame) return;
  if (protocol === 'openai') {
    const other = refs.find((r) => r !== frame && r.kind === 'image');
    if (other)
      other.report(
        other.at,
        `the openai protocol sends one image, as input_reference: with a ${frame.role} it cannot carry another image (${other.role}); use the general protocol or drop one`,
      );
    return;
  }
  const media = refs.find((r) => r.role.startsWith('reference_'));
  if (media && !caps.mixFramesAndReferences) {
    frame.report(
      frame.at,
      `model ${model} refuses first/last frames and reference media (${media.role} at ${label(media.at)}) in one request (${caps.source.mix}); ` +
        'keep the frames or the reference media',
    );
  }
}

function label(at: readonly (string | number)[]): string {
  return at.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${p}` : p), '');
}

/** The role a frame taken from another item is sent as: the written one, else first_frame. */
export function needRole(need: WrittenNeed, written: string | undefined): string {
  if (need.use === 'video') return 'reference_video';
  return written ?? 'first_frame';
}

/**
 * A written need resolved to the needed item in the same combination: its key (the kept take when
 * picks name one) and definition; undefined when the needed item did not expand (its own errors say why).
 * A frame at or past the needed item's length is reported.
 */
export function resolveNeed(
  registry: ChainRegistry,
  need: WrittenNeed | { use: 'after'; of: string },
  fullSig: string,
  keptTakes: ReadonlyMap<string, string> | undefined,
  report: (message: string) => void,
): { need: ItemNeed; definition: string } | undefined {
  const dep = registry.get(need.of)?.get(fullSig);
  if (!dep) return undefined;
  const kept = keptTakes?.get(dep.key);
  const key = kept !== undefined && baseKeyOf(kept) === dep.key ? kept : dep.key;
  const out: ItemNeed = { key, use: need.use };
  if (need.use === 'frame') {
    const at = parseSeconds((need as WrittenNeed).at) ?? 0;
    if (dep.seconds !== undefined && at >= dep.seconds) {
      report(
        `at ${at}s is not in ${need.of}'s video: it is ${dep.seconds}s long (seconds: "${dep.seconds}"); use a time below ${dep.seconds}s, or last_frame_of`,
      );
      return undefined;
    }
    out.at = at;
  }
  return { need: out, definition: dep.definition };
}

/** Sets each need's role on the plan item's need (frames only). */
export function withRole(need: ItemNeed, role: string): ItemNeed {
  return need.use === 'last_frame' || need.use === 'frame' ? { ...need, role: role as FrameRole } : need;
}

/**
 * After expansion: every item another needs is `neededBy`; every take of an item needed for its last
 * frame asks the gateway for it when its model returns one (general protocol), so keeping another
 * take later changes no take's request.
 */
export function linkNeeds(items: PlanItem[], data: JobFileData, lastFrameOf: ReadonlySet<string>): void {
  const byKey = new Map(items.map((item, i) => [item.key, i]));
  for (const item of items) {
    for (const need of item.needs ?? []) {
      const i = byKey.get(need.key);
      if (i !== undefined) items[i] = { ...(items[i] as PlanItem), neededBy: true };
    }
  }
  if (lastFrameOf.size === 0) return;
  const returns = new Map<string, ModelCapabilities>();
  items.forEach((item, i) => {
    if (!lastFrameOf.has(baseKeyOf(item.key)) || item.request.protocol !== 'general') return;
    const { model, protocol } = item.request;
    const caps = returns.get(model) ?? modelCapabilities(data, model, protocol);
    returns.set(model, caps);
    if (caps.returnsLastFrame) items[i] = { ...item, request: { ...item.request, returnLastFrame: true } };
  });
}

/**
 * The job's `assemble:` films: names unique, every id an item of the job, the crossfade shorter than
 * each clip it joins. With a matrix, one film per combination, named `<name>.<values>`.
 */
export function assembleSpecs(
  data: JobFileData,
  ctx: Ctx,
  registry: ChainRegistry,
  combos: readonly ReadonlyMap<string, Scalar>[],
  keptTakes: ReadonlyMap<string, string> | undefined,
  ids: ReadonlySet<string>,
): AssemblySpec[] | undefined {
  if (!data.assemble) return undefined;
  const names = new Map<string, number>();
  const specs: AssemblySpec[] = [];
  data.assemble.forEach((film, i) => {
    const first = names.get(film.name);
    if (first !== undefined) {
      ctx.errors.push(ctx.pos.error(['assemble', i, 'name'], `duplicate assembly name "${film.name}": assemble[${first}] has it too`));
      return;
    }
    names.set(film.name, i);
    let ok = true;
    film.items.forEach((id, j) => {
      if (ids.has(id)) return;
      ctx.errors.push(
        ctx.pos.error(
          ['assemble', i, 'items', j],
          `no item has the id "${id}"; ids of the job: ${[...ids].slice(0, 10).join(', ') || 'none'}`,
        ),
      );
      ok = false;
    });
    const crossfadeSec = film.crossfade === undefined ? undefined : parseSeconds(film.crossfade);
    if (!ok) return;
    for (const combo of combos) {
      const sig = comboSignature(combo);
      const clips = film.items.map((id) => registry.get(id)?.get(sig));
      if (clips.some((c) => c === undefined)) return; // an item that did not expand: its errors say why
      const resolved = clips as ResolvedItem[];
      // A clip is crossfaded at each end it shares with another: the first and last at one, the others at two.
      const fades = (i: number) => (i > 0 ? 1 : 0) + (i < resolved.length - 1 ? 1 : 0);
      const short =
        crossfadeSec === undefined
          ? undefined
          : resolved.find((c, j) => c.seconds !== undefined && fades(j) > 0 && crossfadeSec * fades(j) >= c.seconds);
      if (short) {
        ctx.errors.push(
          ctx.pos.error(
            ['assemble', i, 'crossfade'],
            `crossfade ${crossfadeSec}s is too long for a ${short.seconds}s clip (${short.key}): a clip must be longer than its crossfades (one at each end it shares)`,
          ),
        );
        return;
      }
      const keys = resolved.map((c) => {
        const kept = keptTakes?.get(c.key);
        return kept !== undefined && baseKeyOf(kept) === c.key ? kept : c.key;
      });
      const name = combos.length > 1 ? `${film.name}.${comboSuffix([...combo.values()])}` : film.name;
      specs.push(crossfadeSec !== undefined && crossfadeSec > 0 ? { name, keys, crossfadeSec } : { name, keys });
    }
  });
  return specs;
}
