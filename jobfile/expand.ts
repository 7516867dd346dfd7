// Expansion: defaults -> models.<m> -> item -> matrix, placeholders, references, keys and output
// names; plus every check that needs more than one value at a time.
import { resolve } from 'node:path';
import type { Ctx } from './context';
import { warn } from './context';
import { DEFAULT_MESSAGE } from './issues';
import { comboSuffix, shortHash } from './keys';
import type { AssetKind, PlanItem, Protocol, ReferenceAsset, RenderRequest } from './plan';
import { parseTemplate, renderTemplate } from './placeholders';
import { type JobFileData, PARAM_KEYS, type ParamKey, paramSchemas } from './schema';
import { BUILTIN_PLACEHOLDERS } from './settings';
import type { ItemSource } from './sources';
import { show } from './text';
import { classifySource, outputNameProblem } from './values';

type Scalar = string | number | boolean;
type Level = 'matrix' | 'item' | 'model' | 'defaults';
interface MatrixAxis {
  key: string;
  values: Scalar[];
}

/** Parameters that only one protocol has; a mismatch in defaults is dropped, anywhere else an error. */
const ONLY: Partial<Record<ParamKey, Protocol>> = { resolution: 'general', ratio: 'general', size: 'openai' };
const INSTEAD: Record<string, string> = {
  resolution: 'the openai protocol takes size such as "1280x720"',
  ratio: 'the openai protocol takes size such as "1280x720"',
  size: 'the general protocol takes resolution and ratio',
};
const KINDS: readonly AssetKind[] = ['image', 'video', 'audio'];
export const MAX_ITEMS = 200_000;

function matrixAxes(data: JobFileData, ctx: Ctx, vars: ReadonlyMap<string, string>): MatrixAxis[] {
  const axes: MatrixAxis[] = [];
  for (const [key, raw] of Object.entries(data.matrix ?? {})) {
    if ((BUILTIN_PLACEHOLDERS as readonly string[]).includes(key) && key !== 'model') {
      ctx.errors.push(ctx.pos.error(['matrix', key], `matrix key '${key}' is reserved: {${key}} is built in`, 'key'));
      continue;
    }
    if (vars.has(key) && key !== 'job' && key !== 'date') {
      ctx.errors.push(ctx.pos.error(['matrix', key], `matrix key '${key}' is also a vars key; rename one of them`, 'key'));
      continue;
    }
    const values: Scalar[] = [];
    const seen = new Set<string>();
    raw.forEach((v, i) => {
      let value: Scalar = v;
      if ((PARAM_KEYS as readonly string[]).includes(key)) {
        const r = paramSchemas[key as ParamKey].safeParse(v, { reportInput: true, error: () => DEFAULT_MESSAGE });
        if (!r.success) {
          const m = r.error.issues[0]?.message;
          ctx.errors.push(ctx.pos.error(['matrix', key, i], m && m !== DEFAULT_MESSAGE ? m : `${key} cannot be ${show(v)}`));
          return;
        }
        value = r.data as Scalar;
      }
      if (seen.has(String(value))) ctx.errors.push(ctx.pos.error(['matrix', key, i], `matrix.${key} lists ${show(v)} twice`));
      seen.add(String(value));
      values.push(value);
    });
    axes.push({ key, values });
  }
  return axes;
}

function combinations(axes: readonly MatrixAxis[]): Map<string, Scalar>[] {
  let combos: Map<string, Scalar>[] = [new Map()];
  for (const axis of axes) {
    const next: Map<string, Scalar>[] = [];
    for (const c of combos) for (const v of axis.values) next.push(new Map([...c, [axis.key, v]]));
    combos = next;
  }
  return combos;
}

/** Expands every source once per matrix combination, in order: sources first, combinations inside. */
export function expandItems(data: JobFileData, ctx: Ctx, sources: readonly ItemSource[], jobValues: ReadonlyMap<string, string>): PlanItem[] {
  const axes = matrixAxes(data, ctx, jobValues);
  const combos = combinations(axes);
  const total = sources.length * combos.length;
  if (total > MAX_ITEMS) {
    ctx.errors.push(ctx.pos.error(data.matrix ? ['matrix'] : ['items'], `the job expands to ${total} items; at most ${MAX_ITEMS} are allowed`));
    return [];
  }
  const defaults = data.defaults ?? {};
  const models = data.models ?? {};
  const outputName = data.output.name;
  const nameIsBad = staticNameProblem(outputName);
  if (nameIsBad) ctx.errors.push(ctx.pos.error(['output', 'name'], `output name "${outputName}" ${nameIsBad}`));
  const unusedDefaults = new Set<ParamKey>((['resolution', 'ratio', 'size'] as const).filter((k) => defaults[k] !== undefined));
  const fileChecks = new Map<string, boolean>();
  const ids = new Map<string, ItemSource>();
  const keys = new Map<string, string>();
  const outputs = new Map<string, string>();
  const items: PlanItem[] = [];
  let index = 0;

  for (const src of sources) {
    const { item } = src;
    if (item.id !== undefined) {
      const first = ids.get(item.id);
      if (first) ctx.errors.push(src.locate(['id'], `duplicate id "${item.id}": ${where(first)} has it too`));
      else ids.set(item.id, src);
    }
    const seenCombos = new Set<string>();
    const droppedReported = new Set<string>();
    for (const fullCombo of combos) {
      const pick = (k: ParamKey, withModel?: string, combo = fullCombo): { value: Scalar; level: Level } | undefined => {
        const m = combo.get(k);
        if (m !== undefined) return { value: m, level: 'matrix' };
        const own = item[k as keyof typeof item];
        if (own !== undefined) return { value: own as Scalar, level: 'item' };
        const me = withModel !== undefined ? models[withModel] : undefined;
        const mv = me && k !== 'model' ? me[k as Exclude<ParamKey, 'model'>] : undefined;
        if (mv !== undefined) return { value: mv as Scalar, level: 'model' };
        const dv = defaults[k];
        return dv === undefined ? undefined : { value: dv as Scalar, level: 'defaults' };
      };
      const model = pick('model')?.value as string | undefined;
      if (model === undefined) {
        ctx.errors.push(src.locate([], `${src.label} has no model: set model on the item or in defaults`));
        break;
      }
      const modelEntry = models[model];
      const protocol = (pick('protocol', model)?.value ?? 'general') as Protocol;
      // A matrix parameter the item's protocol does not have is left out for this item (like defaults):
      // the item is rendered once per combination of the axes that apply to it.
      const combo = new Map(fullCombo);
      const dropped = new Map<string, string>();
      for (const k of combo.keys()) {
        const only = ONLY[k as ParamKey];
        if (only && only !== protocol) {
          combo.delete(k);
          dropped.set(k, `matrix.${k} does not apply to this item (model ${model}, ${protocol} protocol)`);
          if (!droppedReported.has(k)) {
            droppedReported.add(k);
            warn(ctx, locPath(src), `matrix.${k} does not apply to ${src.label} (model ${model}, ${protocol} protocol): it is rendered once per remaining combination`);
          }
        }
      }
      const signature = [...combo].map(([k, v]) => `${k}=${String(v)}`).join('\u0000');
      if (seenCombos.has(signature)) continue;
      seenCombos.add(signature);
      index++;
      const request: RenderRequest = { model, protocol, prompt: '', references: [] };
      let failed = false;
      for (const k of ['seconds', 'resolution', 'ratio', 'size', 'generate_audio', 'watermark'] as const) {
        const got = pick(k, model, combo);
        if (!got) continue;
        const only = ONLY[k];
        if (only && only !== protocol) {
          if (got.level === 'defaults') continue;
          const msg = `${k} applies only to the ${only} protocol, but `;
          if (got.level === 'item') ctx.errors.push(src.locate([k], `${msg}this item uses the ${protocol} protocol; ${INSTEAD[k] ?? ''}`));
          else if (got.level === 'model') ctx.errors.push(ctx.pos.error(['models', model, k], `${msg}model ${model} uses the ${protocol} protocol; ${INSTEAD[k] ?? ''}`));
          failed = true;
          continue;
        }
        if (got.level === 'defaults') unusedDefaults.delete(k);
        if (k === 'generate_audio') request.generateAudio = got.value as boolean;
        else if (k === 'watermark') request.watermark = got.value as boolean;
        else request[k] = String(got.value);
      }

      // Placeholder values: built-ins, vars, then items_from columns, then matrix keys.
      const values = new Map(jobValues);
      values.set('index', String(index));
      values.set('model', model);
      if (item.id !== undefined) values.set('id', item.id);
      const own: Record<string, string> = {};
      for (const [k, v] of src.rowVars) {
        values.set(k, v);
        own[k] = v;
      }
      for (const [k, v] of combo) {
        values.set(k, String(v));
        own[k] = String(v);
      }
      const noId = new Map(dropped);
      if (item.id === undefined) noId.set('id', 'this item has no id, and its key is a hash of its prompt; give it an id');
      const prompt = renderTemplate(item.prompt, values, 'prompt', noId);
      if (!prompt.ok) {
        ctx.errors.push(src.locate(['prompt'], prompt.problem));
        failed = true;
      } else request.prompt = prompt.value;

      const hashedRefs: { kind: AssetKind; role: string; source: string }[] = [];
      (item.references ?? []).forEach((ref, j) => {
        const kind = KINDS.find((k) => ref[k] !== undefined) as AssetKind;
        const at = ['references', j, kind];
        const rendered = renderTemplate(ref[kind] as string, values, `a reference`, noId);
        if (!rendered.ok) {
          ctx.errors.push(src.locate(at, rendered.problem));
          failed = true;
          return;
        }
        const written = rendered.value;
        const sourceKind = classifySource(written);
        if (!sourceKind) {
          ctx.errors.push(src.locate(at, `${kind} must be an http(s) URL, a data: URL or a local path, got ${show(written)}`));
          failed = true;
          return;
        }
        const accepted = modelEntry?.assets;
        if (accepted && !accepted.includes(kind)) {
          ctx.errors.push(src.locate(at, `model ${model} does not accept ${kind} references (models.${model}.assets: ${accepted.join(', ') || 'none'})`));
          failed = true;
        }
        if (protocol === 'openai' && kind !== 'image') {
          ctx.errors.push(src.locate(at, `the openai protocol takes only image references (sent as input_reference), got ${kind}`));
          failed = true;
        }
        let source = written;
        if (sourceKind === 'local') {
          source = resolve(ctx.dir, written);
          let exists = fileChecks.get(source);
          if (exists === undefined) {
            exists = ctx.fs.isFile(source);
            fileChecks.set(source, exists);
          }
          if (!exists) {
            ctx.errors.push(src.locate(at, `${kind} file "${written}" does not exist (looked for ${source}, relative to the job file)`));
            failed = true;
          }
        }
        const role = ref.role ?? `reference_${kind}`;
        const asset: ReferenceAsset = { kind, role, source, local: sourceKind === 'local' };
        request.references.push(asset);
        hashedRefs.push({ kind, role, source: written });
      });
      if (protocol === 'openai' && hashedRefs.filter((r) => r.kind === 'image').length > 1 && seenCombos.size === 1) {
        warn(ctx, locPath(src), `${src.label}: the openai protocol uploads only the first reference image; the others are ignored`);
      }
      if (failed) continue;

      const key = item.id !== undefined
        ? (combo.size > 0 ? `${item.id}.${comboSuffix([...combo.values()])}` : item.id)
        : shortHash({ ...request, references: hashedRefs });
      values.set('id', item.id ?? key);
      const firstKey = keys.get(key);
      if (firstKey !== undefined && item.id !== undefined && ids.get(item.id) !== src) continue; // reported as a duplicate id
      if (firstKey !== undefined) {
        ctx.errors.push(src.locate([], item.id !== undefined
          ? `${src.label} has the same key "${key}" as ${firstKey}`
          : `${src.label} renders exactly the same request as ${firstKey} (same model, prompt, parameters and references); remove one or give each an id`));
        continue;
      }
      keys.set(key, where(src));

      const name = renderTemplate(outputName, values, 'output.name', dropped);
      if (!name.ok) {
        ctx.errors.push(ctx.pos.error(['output', 'name'], name.problem));
        continue;
      }
      if (!nameIsBad) {
        const problem = outputNameProblem(name.value);
        if (problem) {
          ctx.errors.push(src.locate([], `output name "${name.value}" of ${src.label} ${problem}`));
          continue;
        }
      }
      const firstOut = outputs.get(name.value);
      if (firstOut !== undefined) {
        ctx.errors.push(src.locate([], `${src.label} would write the same output "${name.value}" as ${firstOut}; make output.name unique, e.g. with {index} or {id}`));
        continue;
      }
      outputs.set(name.value, where(src));
      const planItem: PlanItem = { key, index, request, outputName: name.value };
      if (item.id !== undefined) planItem.id = item.id;
      if (Object.keys(own).length > 0) planItem.vars = own;
      items.push(planItem);
    }
  }
  for (const k of unusedDefaults) {
    warn(ctx, ['defaults', k], `defaults.${k} is not used by any item: each sets its own (or the matrix does), or uses a protocol without ${k} (${k} is ${ONLY[k] ?? ''} only)`);
  }
  return items;
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
  const literal = parseTemplate(template).map((p) => (typeof p === 'string' ? p : 'x')).join('');
  return outputNameProblem(literal);
}
