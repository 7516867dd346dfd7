// Expansion: defaults -> models.<m> -> item -> matrix, placeholders, references, keys and output
// names; plus every check that needs more than one value at a time.
import { resolve } from 'node:path';
import { MANIFEST_FILE } from '../domain/output';
import type { Ctx } from './context';
import { warn } from './context';
import { type AssemblySpec, type ItemNeed, namedIds, orderByNeeds, writtenNeedOf } from './chains';
import {
  assembleSpecs,
  type ChainRegistry,
  type CheckedRef,
  checkFrameRoles,
  comboSignature,
  linkNeeds,
  needRole,
  type ResolvedItem,
  resolveNeed,
  withRole,
} from './expand-chains';
import { modelCapabilities } from './capabilities';
import { comboSuffix, shortHash } from './keys';
import type { AssetKind, JobFileError, OutputSettings, PlanItem, Protocol, ReferenceAsset, RenderRequest } from './plan';
import { combinations, matrixAxes, type Scalar } from './matrix';
import type { ModelSites } from './model-sites';
import { nameSafeValue, OutputNameSet, PlantedLinks, storedNameProblem } from './output-names';
import { readScopeProblem } from './read-scope';
import { itemSizeProblem } from './item-size';
import { referenceSizeProblem } from './reference-limits';
import { parseTemplate, placeholderNames, renderTemplate } from './placeholders';
import { type RedoTake, baseKeyOf, takeKey, takeOutputName, takeSeed } from './takes';
import type { JobFileData, ParamKey } from './schema';
import type { ItemSource } from './sources';
import { show } from './text';
import { classifySource, outputNameProblem } from './values';

type Level = 'matrix' | 'item' | 'model' | 'defaults';

/** Parameters that only one protocol has; a mismatch in defaults is dropped, anywhere else an error. */
const ONLY: Partial<Record<ParamKey, Protocol>> = { resolution: 'general', ratio: 'general', size: 'openai' };
const INSTEAD: Record<string, string> = {
  resolution: 'the openai protocol takes size such as "1280x720"',
  ratio: 'the openai protocol takes size such as "1280x720"',
  size: 'the general protocol takes resolution and ratio',
};
const KINDS: readonly AssetKind[] = ['image', 'video', 'audio'];
export const MAX_ITEMS = 200_000;

/** What expanding one job keeps across its items: checks of uniqueness, and what was used. */
interface Expansion {
  data: JobFileData;
  ctx: Ctx;
  jobValues: ReadonlyMap<string, string>;
  /** The output name template is wrong whatever it is filled with: per-item checks add nothing. */
  nameIsBad: string | undefined;
  unusedDefaults: Set<ParamKey>;
  fileChecks: Map<string, boolean>;
  ids: Map<string, ItemSource>;
  keys: Map<string, string>;
  outputs: OutputNameSet;
  /** Placeholders whose unsafe characters in output names were already warned about. */
  warnedUnsafe: Set<string>;
  /** Problems with defaults.references already reported (`line:column:message`). */
  sharedProblems: Set<string>;
  /** Local references, for the check that no output replaces one (checkInputsKept). */
  localReferences: { path: string; owner: string; error: (message: string) => JobFileError }[];
  /** Whether output.name has `{take}` (else takes past the first get `-t<n>`). */
  nameHasTake: boolean;
  /** `run --redo`/`--only`: per first-take key, the takes asked for; only they are in the plan. */
  redo: ReadonlyMap<string, readonly RedoTake[]> | undefined;
  /** Takes expanded so far, against MAX_ITEMS. */
  count: number;
  /** The total was reported as too large: nothing more is expanded. */
  tooMany: boolean;
  /** Items by id and combination, for the items that need them (docs/chains.md). */
  chains: ChainRegistry;
  /**
   * First-take keys of the items some item needs the last frame of, whether or not that item is in
   * the plan (`run --redo` plans a few takes): each of their takes asks for it the same way.
   */
  lastFrameOf: Set<string>;
  /** The ids some item or film names: only those are kept in `chains` (a large job names few). */
  named: ReadonlySet<string>;
  /** First-take key -> the kept take's key (storage/records/picks.ts), for resolving needs. */
  keptTakes: ReadonlyMap<string, string> | undefined;
}

/** One item under one matrix combination, before its request is built. */
interface Variant {
  src: ItemSource;
  index: number;
  model: string;
  protocol: Protocol;
  /** The matrix values that apply to this item's protocol. */
  combo: Map<string, Scalar>;
  /** Matrix keys left out for this item, with why (for placeholder errors). */
  dropped: Map<string, string>;
  /** Whether this is the item's first variant (warnings about the item are given once). */
  first: boolean;
  /** The full matrix combination's signature: needs resolve within it. */
  fullSig: string;
}

/** What expanding a job gives: its items in dependency order, and its films. */
export interface Expanded {
  items: PlanItem[];
  assemble?: AssemblySpec[];
}

/** Options of the chain part: the kept takes, once picks exist (docs/chains.md). */
export interface ExpandChains {
  /** First-take key -> the kept take's key: a need on the item resolves to the kept take. */
  keptTakes?: ReadonlyMap<string, string>;
}

/**
 * Expands every source once per matrix combination and take, in order: sources first,
 * combinations inside, takes innermost. With `redo` (docs/takes.md) the plan holds only the takes
 * it names, every other take checked all the same (keys and names stay unique).
 */
export function expandItems(
  data: JobFileData,
  ctx: Ctx,
  sources: readonly ItemSource[],
  jobValues: ReadonlyMap<string, string>,
  output?: OutputSettings,
  sites?: ModelSites,
  redo?: readonly RedoTake[],
  chains: ExpandChains = {},
): Expanded {
  // The loader has checked the count (sources x combinations <= MAX_ITEMS) before building either.
  const combos = combinations(matrixAxes(data, ctx, jobValues));
  const defaults = data.defaults ?? {};
  const run: Expansion = {
    data,
    ctx,
    jobValues,
    nameIsBad: staticNameProblem(data.output.name),
    unusedDefaults: new Set((['resolution', 'ratio', 'size'] as const).filter((k) => defaults[k] !== undefined)),
    fileChecks: new Map(),
    ids: new Map(),
    keys: new Map(),
    outputs: new OutputNameSet(),
    sharedProblems: new Set(),
    warnedUnsafe: new Set(),
    localReferences: [],
    nameHasTake: placeholderNames(data.output.name).includes('take'),
    redo: redo ? redoByBase(redo) : undefined,
    count: 0,
    tooMany: false,
    chains: new Map(),
    lastFrameOf: new Set(),
    named: new Set([...sources.flatMap((src) => namedIds(src).map((n) => n.id)), ...(data.assemble ?? []).flatMap((a) => a.items)]),
    keptTakes: chains.keptTakes,
  };
  if (run.nameIsBad) ctx.errors.push(ctx.pos.error(['output', 'name'], `output name "${data.output.name}" ${run.nameIsBad}`));
  const items: PlanItem[] = [];
  let index = 0;
  // Every item after the items it needs (unknown ids and cycles reported here): the plan's order.
  const ordered = orderByNeeds(sources, (src, at, message) => ctx.errors.push(src.locate(at, message)));
  for (const src of ordered) {
    noteId(run, src);
    const seen = new Map<string, ResolvedItem | undefined>();
    const droppedReported = new Set<string>();
    for (const fullCombo of combos) {
      const picked = pickParam(data, src, fullCombo, 'model');
      if (picked === undefined) {
        ctx.errors.push(src.locate([], `${src.label} has no model: set model on the item or in defaults`));
        break;
      }
      const model = picked.value as string;
      sites?.item(model, picked.level, src);
      const protocol = (pickParam(data, src, fullCombo, 'protocol', model)?.value ?? 'general') as Protocol;
      const { combo, dropped } = applicableAxes(run, src, fullCombo, model, protocol, droppedReported);
      const signature = comboSignature(combo);
      const fullSig = comboSignature(fullCombo);
      if (seen.has(signature)) {
        noteResolved(run, src, fullSig, seen.get(signature));
        continue;
      }
      index++;
      const expanded = expandVariant(run, { src, index, model, protocol, combo, dropped, first: seen.size === 0, fullSig });
      seen.set(signature, expanded.resolved);
      noteResolved(run, src, fullSig, expanded.resolved);
      items.push(...expanded.items);
      if (run.tooMany) break;
    }
    if (run.tooMany) break;
  }
  // An item that failed may be the one that would have used a default: no warning on top of errors.
  for (const k of ctx.errors.length > 0 ? [] : run.unusedDefaults) {
    warn(
      ctx,
      ['defaults', k],
      `defaults.${k} is not used by any item: each sets its own (or the matrix does), or uses a protocol without ${k} (${k} is ${ONLY[k] ?? ''} only)`,
    );
  }
  if (output?.storage === 'local' && output.dir) {
    checkInputsKept(run, output.dir);
    checkPlantedLinks(run, output.dir, items);
  }
  linkNeeds(items, data, run.lastFrameOf);
  const ids = new Set(sources.flatMap((src) => (src.item.id !== undefined ? [src.item.id] : [])));
  const assemble = assembleSpecs(data, ctx, run.chains, combos, run.keptTakes, ids);
  return assemble ? { items, assemble } : { items };
}

/** Records how later items find this one in a combination (items with an id only: needs name ids). */
function noteResolved(run: Expansion, src: ItemSource, fullSig: string, resolved: ResolvedItem | undefined): void {
  const { id } = src.item;
  if (id === undefined || resolved === undefined || !run.named.has(id) || run.ids.get(id) !== src) return;
  let byCombo = run.chains.get(id);
  if (!byCombo) run.chains.set(id, (byCombo = new Map()));
  byCombo.set(fullSig, resolved);
}

/** Links planted where the outputs go are named before anything starts (docs/files.md). */
function checkPlantedLinks(run: Expansion, dir: string, items: readonly PlanItem[]): void {
  const { ctx } = run;
  const links = new PlantedLinks(dir);
  const never = 'reelflow never writes through one (it could overwrite a file elsewhere); remove it';
  const refusal = (link: string) => `${link} is a symbolic link: ${never}`;
  const manifest = links.manifest(MANIFEST_FILE);
  if (manifest) ctx.errors.push(ctx.pos.error(['output', 'dir'], `the manifest ${manifest}: ${never}`));
  const reported = new Set<string>();
  for (const item of items) {
    const link = links.onTheWay(item.outputName);
    if (link === undefined || reported.has(link)) continue;
    reported.add(link);
    ctx.errors.push(ctx.pos.error(['output', 'name'], `output "${item.outputName}" would be stored through ${refusal(link)}`));
  }
}

/**
 * No output may be stored over one of the job's own inputs (docs/files.md): with output.dir "."
 * and name "{id}", an item whose reference is ./hero.mp4 would replace the user's hero.mp4.
 */
function checkInputsKept(run: Expansion, dir: string): void {
  const { ctx, data } = run;
  const refuse = (file: string, what: string, report: (message: string) => void) => {
    const stored = run.outputs.storedAt(dir, file);
    if (!stored) return;
    report(
      `output "${stored.name}" of ${stored.owner} would be stored as ${file}, which is ${what}: ` +
        "reelflow never replaces the job's own inputs; change output.name or output.dir",
    );
  };
  refuse(resolve(ctx.file), 'the job file', (m) => ctx.errors.push(ctx.pos.error(['output', 'name'], m)));
  if (data.items_from) {
    refuse(resolve(ctx.dir, data.items_from.file), 'the items_from file', (m) => ctx.errors.push(ctx.pos.error(['items_from', 'file'], m)));
  }
  for (const ref of run.localReferences) {
    refuse(ref.path, `a local reference of ${ref.owner}`, (m) => ctx.errors.push(ref.error(m)));
  }
}

function noteId(run: Expansion, src: ItemSource): void {
  const { id } = src.item;
  if (id === undefined) return;
  const first = run.ids.get(id);
  if (first) run.ctx.errors.push(src.locate(['id'], `duplicate id "${id}": ${where(first)} has it too`));
  else run.ids.set(id, src);
}

/** A parameter's value and where it was set: matrix, then the item, its model's entry, defaults. */
function pickParam(
  data: JobFileData,
  src: ItemSource,
  combo: ReadonlyMap<string, Scalar>,
  k: ParamKey,
  model?: string,
): { value: Scalar; level: Level } | undefined {
  const fromMatrix = combo.get(k);
  if (fromMatrix !== undefined) return { value: fromMatrix, level: 'matrix' };
  const own = src.item[k as keyof typeof src.item];
  if (own !== undefined) return { value: own as Scalar, level: 'item' };
  const entry = model !== undefined ? data.models?.[model] : undefined;
  const fromModel = entry && k !== 'model' ? entry[k as Exclude<ParamKey, 'model'>] : undefined;
  if (fromModel !== undefined) return { value: fromModel as Scalar, level: 'model' };
  const fromDefaults = data.defaults?.[k];
  return fromDefaults === undefined ? undefined : { value: fromDefaults as Scalar, level: 'defaults' };
}

/**
 * A matrix parameter the item's protocol does not have is left out for this item (like defaults):
 * the item is rendered once per combination of the axes that apply to it.
 */
function applicableAxes(
  run: Expansion,
  src: ItemSource,
  fullCombo: ReadonlyMap<string, Scalar>,
  model: string,
  protocol: Protocol,
  reported: Set<string>,
) {
  const combo = new Map(fullCombo);
  const dropped = new Map<string, string>();
  for (const k of combo.keys()) {
    const only = ONLY[k as ParamKey];
    if (!only || only === protocol) continue;
    combo.delete(k);
    dropped.set(k, `matrix.${k} does not apply to this item (model ${model}, ${protocol} protocol)`);
    if (!reported.has(k)) {
      reported.add(k);
      warn(
        run.ctx,
        locPath(src),
        `matrix.${k} does not apply to ${src.label} (model ${model}, ${protocol} protocol): it is rendered once per remaining combination`,
      );
    }
  }
  return { combo, dropped };
}

/** The plan items of one variant, one per take; none after reporting why it cannot be one. */
function expandVariant(run: Expansion, v: Variant): { items: PlanItem[]; resolved?: ResolvedItem } {
  const { src } = v;
  const { item } = src;
  const request: RenderRequest = { model: v.model, protocol: v.protocol, prompt: '', references: [] };
  let ok = applyParams(run, v, request);
  const { values, own } = placeholderValues(run, v);
  const noId = new Map(v.dropped);
  if (item.id === undefined) noId.set('id', 'this item has no id, and its key is a hash of its prompt; give it an id');
  // Takes share their prompt and references: their seeds make them differ.
  const shared = new Map(noId).set('take', 'the takes of an item share it; {take} is for output.name (docs/takes.md)');
  const prompt = renderTemplate(item.prompt, values, 'prompt', shared);
  if (prompt.ok) request.prompt = prompt.value;
  else {
    run.ctx.errors.push(src.locate(['prompt'], prompt.problem));
    ok = false;
  }
  const added = addReferences(run, v, values, shared, request);
  const after = afterNeeds(run, v);
  if (!added || !after || !ok) return { items: [] };
  const hashedRefs = added.hashed;
  const needs = [...added.needs, ...after];

  // A need is hashed by what it needs' definition is: an item without an id gets a new key when the
  // item it continues from changes, and keeps its key otherwise (docs/chains.md).
  // Hashed only when something uses it: the key of an item without id, a later item's need.
  const definition = item.id === undefined || run.named.has(item.id) ? shortHash({ ...request, references: hashedRefs }) : '';
  const key = item.id !== undefined ? (v.combo.size > 0 ? `${item.id}.${comboSuffix([...v.combo.values()])}` : item.id) : definition;
  const resolved: ResolvedItem = { key, definition };
  if (request.seconds !== undefined) resolved.seconds = Number(request.seconds);
  values.set('id', item.id ?? key);
  const variants = pickParam(run.data, src, v.combo, 'variants', v.model);
  const userSeed = pickParam(run.data, src, v.combo, 'seed', v.model)?.value as number | undefined;
  const count = (variants?.value as number | undefined) ?? 1;
  if (!roomFor(run, v, count, variants?.level)) return { items: [] };
  const asked = run.redo?.get(key);
  const takes = new Set<number>(Array.from({ length: count }, (_, i) => i + 1));
  for (const t of asked ?? []) takes.add(t.take);
  const items: PlanItem[] = [];
  for (const take of takes) {
    const takeItem = expandTake(run, v, { key, take, values, own, request, userSeed, withTakes: variants !== undefined });
    const redoOf = asked?.find((t) => t.take === take)?.of;
    if (takeItem && needs.length > 0) takeItem.needs = needs;
    if (takeItem && (!run.redo || redoOf !== undefined)) items.push(redoOf ? { ...takeItem, redoOf } : takeItem);
  }
  return { items, resolved };
}

/** `after: [id, ...]`: needs that pass nothing (and so are not hashed into the key); undefined on a problem. */
function afterNeeds(run: Expansion, v: Variant): ItemNeed[] | undefined {
  const out: ItemNeed[] = [];
  for (const id of v.src.item.after ?? []) {
    const got = resolveNeed(run.chains, { use: 'after', of: id }, v.fullSig, run.keptTakes, () => undefined);
    if (!got) return undefined;
    if (!out.some((n) => n.key === got.need.key)) out.push(got.need);
  }
  return out;
}

/** One take of a variant: its key, name and seed; undefined after reporting a problem. */
function expandTake(
  run: Expansion,
  v: Variant,
  t: {
    key: string;
    take: number;
    values: Map<string, string>;
    own: Record<string, string>;
    request: RenderRequest;
    userSeed: number | undefined;
    /** `variants` is set for the item: every take, the first too, is numbered and seeded. */
    withTakes: boolean;
  },
): PlanItem | undefined {
  const { src } = v;
  const key = takeKey(t.key, t.take);
  if (!claimKey(run, src, key)) return undefined;
  t.values.set('take', String(t.take));
  const outputName = claimOutputName(run, v, t.values, t.take);
  if (outputName === undefined) return undefined;
  const numbered = t.withTakes || t.take > 1;
  const seeded = numbered || t.userSeed !== undefined;
  const request = seeded ? { ...t.request, seed: takeSeed(t.key, t.take, t.userSeed) } : t.request;
  const planItem: PlanItem = { key, index: v.index, request, outputName };
  if (src.item.id !== undefined) planItem.id = src.item.id;
  if (Object.keys(t.own).length > 0) planItem.vars = t.own;
  if (numbered) planItem.take = t.take;
  // Without an id, each matrix value's key is its own hash: the source item is named apart.
  if (src.item.id === undefined && v.combo.size > 0) planItem.group = shortHash({ source: src.label, prompt: src.item.prompt });
  const tooLarge = itemSizeProblem(planItem);
  if (tooLarge) {
    run.ctx.errors.push(src.locate(tooLarge.at, tooLarge.message));
    return undefined;
  }
  return planItem;
}

/** The job may hold `count` more takes (MAX_ITEMS in all); else reported once at where variants was set. */
function roomFor(run: Expansion, v: Variant, count: number, level: Level | undefined): boolean {
  run.count += count;
  if (run.count <= MAX_ITEMS) return true;
  run.tooMany = true;
  const message = `variants: ${count} takes each make the job more than ${MAX_ITEMS} renders; at most ${MAX_ITEMS} are allowed (fewer variants, items or matrix values)`;
  if (level === 'item') run.ctx.errors.push(v.src.locate(['variants'], message));
  else if (level === 'model') run.ctx.errors.push(run.ctx.pos.error(['models', v.model, 'variants'], message));
  else
    run.ctx.errors.push(
      run.ctx.pos.error(level === 'matrix' ? ['matrix', 'variants'] : level === 'defaults' ? ['defaults', 'variants'] : [], message),
    );
  return false;
}

/** The takes a redo asks for, by the key of their item's first take. */
function redoByBase(redo: readonly RedoTake[]): Map<string, RedoTake[]> {
  const byBase = new Map<string, RedoTake[]>();
  for (const t of redo) {
    const base = baseKeyOf(t.of);
    byBase.set(base, [...(byBase.get(base) ?? []), t]);
  }
  return byBase;
}

/** Sets the request's parameters; false when one does not fit the item's protocol. */
function applyParams(run: Expansion, v: Variant, request: RenderRequest): boolean {
  let ok = true;
  for (const k of ['seconds', 'resolution', 'ratio', 'size', 'generate_audio', 'watermark'] as const) {
    const got = pickParam(run.data, v.src, v.combo, k, v.model);
    if (!got) continue;
    const only = ONLY[k];
    if (only && only !== v.protocol) {
      if (got.level === 'defaults') continue;
      const msg = `${k} applies only to the ${only} protocol, but `;
      if (got.level === 'item')
        run.ctx.errors.push(v.src.locate([k], `${msg}this item uses the ${v.protocol} protocol; ${INSTEAD[k] ?? ''}`));
      else if (got.level === 'model')
        run.ctx.errors.push(
          run.ctx.pos.error(['models', v.model, k], `${msg}model ${v.model} uses the ${v.protocol} protocol; ${INSTEAD[k] ?? ''}`),
        );
      ok = false;
      continue;
    }
    if (got.level === 'defaults') run.unusedDefaults.delete(k);
    if (k === 'generate_audio') request.generateAudio = got.value as boolean;
    else if (k === 'watermark') request.watermark = got.value as boolean;
    else request[k] = String(got.value);
  }
  return ok;
}

/** Placeholder values: built-ins, vars, then items_from columns, then matrix keys; `own` are the item's. */
function placeholderValues(run: Expansion, v: Variant) {
  const values = new Map(run.jobValues);
  values.set('index', String(v.index));
  values.set('model', v.model);
  if (v.src.item.id !== undefined) values.set('id', v.src.item.id);
  const own: Record<string, string> = {};
  for (const [k, value] of [...v.src.rowVars, ...[...v.combo].map(([ck, cv]) => [ck, String(cv)] as const)]) {
    values.set(k, value);
    own[k] = value;
  }
  return { values, own };
}

/**
 * Adds the item's references to the request; their written form (for the key) and the needs of those
 * that name another item (docs/chains.md), or undefined on a problem.
 */
function addReferences(
  run: Expansion,
  v: Variant,
  values: ReadonlyMap<string, string>,
  noId: ReadonlyMap<string, string>,
  request: RenderRequest,
): { hashed: unknown[]; needs: ItemNeed[] } | undefined {
  const { ctx } = run;
  const { src, model, protocol } = v;
  const hashed: unknown[] = [];
  const needs: ItemNeed[] = [];
  const checked: CheckedRef[] = [];
  let ok = true;
  const problem = (at: (string | number)[], message: string) => {
    ctx.errors.push(src.locate(at, message));
    ok = false;
  };
  // The item's own references, then the shared ones of defaults.references (docs/jobfiles.md); a
  // problem with a shared one is reported once, at defaults, not once per item.
  const shared = (at: (string | number)[], message: string) => {
    const error = ctx.pos.error(['defaults', ...at], message);
    const said = `${error.line}:${error.column}:${error.message}`;
    if (!run.sharedProblems.has(said)) ctx.errors.push(error);
    run.sharedProblems.add(said);
    ok = false;
  };
  const entries = [
    ...(src.item.references ?? []).map((ref, j) => ({ ref, j, report: problem })),
    ...(run.data.defaults?.references ?? []).map((ref, j) => ({ ref, j, report: shared })),
  ];
  if (entries.length === 0) return { hashed, needs };
  const caps = modelCapabilities(run.data, model, protocol);
  entries.forEach(({ ref, j, report }) => {
    const problem = report;
    const kind = KINDS.find((k) => ref[k] !== undefined) as AssetKind;
    const at = ['references', j, kind];
    const accepted = caps.assets;
    if (accepted && !accepted.includes(kind)) {
      const from =
        caps.source.assets === `models.${model}.assets` ? `models.${model}.assets: ${accepted.join(', ') || 'none'}` : caps.source.assets;
      problem(at, `model ${model} does not accept ${kind} references (${from})`);
    }
    if (protocol === 'openai' && kind !== 'image')
      problem(at, `the openai protocol takes only image references (sent as input_reference), got ${kind}`);
    const need = writtenNeedOf(ref[kind]);
    if (need) {
      if (report === shared)
        return problem(
          at,
          'defaults.references cannot name an item (every item, that one too, would get it): put it on the items that need it',
        );
      const role = needRole(need, ref.role);
      checked.push({ kind, role, at, report: problem });
      const got = resolveNeed(run.chains, need, v.fullSig, run.keptTakes, (m) => problem([...at, 'at'], m));
      if (!got) {
        ok = false;
        return;
      }
      needs.push(withRole(got.need, role));
      if (need.use === 'last_frame') run.lastFrameOf.add(baseKeyOf(got.need.key));
      hashed.push({ kind, role, need: need.use, at: got.need.at, of: got.definition });
      return;
    }
    const rendered = renderTemplate(ref[kind] as string, values, `a reference`, noId);
    if (!rendered.ok) return problem(at, rendered.problem);
    const written = rendered.value;
    const sourceKind = classifySource(written);
    if (!sourceKind) return problem(at, `${kind} must be an http(s) URL, a data: URL or a local path, got ${show(written)}`);
    let source = written;
    if (sourceKind === 'local') {
      source = resolve(ctx.dir, written);
      const locate = report === shared ? (m: string) => ctx.pos.error(['defaults', ...at], m) : (m: string) => src.locate(at, m);
      const outOfScope = readScopeProblem(ctx, source, false, locate);
      if (report !== shared) run.localReferences.push({ path: source, owner: src.label, error: (m) => src.locate(at, m) });
      else if (!run.localReferences.some((r) => r.path === source && r.owner === 'defaults.references'))
        run.localReferences.push({ path: source, owner: 'defaults.references', error: (m) => ctx.pos.error(['defaults', ...at], m) });
      if (outOfScope) problem(at, outOfScope);
      else if (!localFileExists(run, source))
        problem(at, `${kind} file "${written}" does not exist (looked for ${source}, relative to the job file)`);
      else {
        const tooLarge = referenceSizeProblem(`${kind} file "${written}"`, ctx.fs.size?.(source) ?? 0);
        if (tooLarge) problem(at, tooLarge);
      }
    }
    const role = ref.role ?? `reference_${kind}`;
    checked.push({ kind, role, at, report: problem });
    const asset: ReferenceAsset = { kind, role, source, local: sourceKind === 'local' };
    request.references.push(asset);
    hashed.push({ kind, role, source: written });
  });
  checkFrameRoles(run.data, model, protocol, checked);
  const images = checked.filter((r) => r.kind === 'image');
  if (protocol === 'openai' && images.length > 1 && v.first && !images.some((r) => r.role !== 'reference_image')) {
    warn(ctx, locPath(src), `${src.label}: the openai protocol uploads only the first reference image; the others are ignored`);
  }
  return ok ? { hashed, needs } : undefined;
}

function localFileExists(run: Expansion, path: string): boolean {
  let exists = run.fileChecks.get(path);
  if (exists === undefined) {
    exists = run.ctx.fs.isFile(path);
    run.fileChecks.set(path, exists);
  }
  return exists;
}

/** Records the item's key; false when another item has it (reported, unless as a duplicate id). */
function claimKey(run: Expansion, src: ItemSource, key: string): boolean {
  const { id } = src.item;
  const firstKey = run.keys.get(key);
  if (firstKey === undefined) {
    run.keys.set(key, where(src));
    return true;
  }
  if (id !== undefined && run.ids.get(id) !== src) return false; // reported as a duplicate id
  run.ctx.errors.push(
    src.locate(
      [],
      id !== undefined
        ? `${src.label} has the same key "${key}" as ${firstKey}`
        : `${src.label} renders exactly the same request as ${firstKey} (same model, prompt, parameters and references); remove one or give each an id`,
    ),
  );
  return false;
}

/** The take's output name, checked and unique; undefined after reporting a problem. */
function claimOutputName(run: Expansion, v: Variant, values: ReadonlyMap<string, string>, take: number): string | undefined {
  const { ctx } = run;
  const { src } = v;
  const { safe, notes } = nameSafeValues(run, values);
  const rendered = renderTemplate(run.data.output.name, safe, 'output.name', v.dropped);
  if (!rendered.ok) {
    ctx.errors.push(ctx.pos.error(['output', 'name'], rendered.problem));
    return undefined;
  }
  const name = { value: takeOutputName(rendered.value, run.nameHasTake, take) };
  const { output } = run.data;
  const problem = run.nameIsBad
    ? undefined
    : (outputNameProblem(name.value) ?? storedNameProblem(name.value, output.storage, output.s3?.prefix));
  if (problem) {
    ctx.errors.push(src.locate([], `output name "${name.value}" of ${src.label} ${problem}`));
    return undefined;
  }
  const claimed = run.outputs.claim(name.value, where(src));
  if (claimed.error) {
    ctx.errors.push(src.locate([], `${src.label} ${claimed.error}`));
    return undefined;
  }
  if (claimed.warning) warn(ctx, locPath(src), `${src.label}: ${claimed.warning}`);
  for (const note of notes) warn(ctx, ['output', 'name'], `${note} (output "${name.value}")`);
  return name.value;
}

/**
 * The placeholder values with the characters unsafe in file names replaced (docs/jobfiles.md), and
 * one note per placeholder the first time it needs it (for the warning).
 */
function nameSafeValues(run: Expansion, values: ReadonlyMap<string, string>): { safe: Map<string, string>; notes: string[] } {
  const safe = new Map(values);
  const notes: string[] = [];
  for (const name of placeholderNames(run.data.output.name)) {
    const value = values.get(name);
    const fixed = value === undefined ? undefined : nameSafeValue(value);
    if (!fixed || fixed.replaced.length === 0) continue;
    safe.set(name, fixed.value);
    if (run.warnedUnsafe.has(name)) continue;
    run.warnedUnsafe.add(name);
    const chars = fixed.replaced.map((c) => `"${c}"`).join(', ');
    const verb = fixed.replaced.length > 1 ? 'are' : 'is';
    notes.push(`{${name}} gives "${value}"; ${chars} ${verb} not allowed in file names on Windows and macOS, so it is written as "-"`);
  }
  return { safe, notes };
}

function where(src: ItemSource): string {
  const at = src.locate([], '');
  return src.label.startsWith('items[') ? `${src.label} (line ${at.line})` : src.label;
}

function locPath(src: ItemSource): (string | number)[] {
  const m = /^items\[(\d+)\]$/.exec(src.label);
  return m ? ['items', Number(m[1])] : ['items_from', 'file'];
}

/** A problem the name template has whatever the placeholders hold (literal `..`, leading `/`). */
function staticNameProblem(template: string): string | undefined {
  const literal = parseTemplate(template)
    .map((p) => (typeof p === 'string' ? p : 'x'))
    .join('');
  return outputNameProblem(literal);
}
