import type { OutputSettings, PlanItem } from '../jobfile/plan';
import { resolutionOf } from '../jobfile/prices';
import type { ManifestRow } from '../storage/manifest/row';
import { storageFor } from './context';
import { translated } from './failures';
import { metricsHere } from './metrics';

/** What of its plan item a row records beside the render (docs/takes.md): the take, its seed, what was asked. */
export type RecordedItem = Pick<PlanItem, 'take' | 'group' | 'vars' | 'redoOf'> & {
  request: Pick<PlanItem['request'], 'protocol' | 'seed' | 'seconds' | 'ratio' | 'resolution' | 'size'>;
};

/**
 * Appends the item's final manifest line beside its video, then counts the item's end. `item`:
 * absent from workflows that started before rows held their take (their rows stay as they were).
 * `enhanceModel`: the model whose spend the row's rewrite_cost_usd is.
 */
export function recordItem(input: { output: OutputSettings; row: ManifestRow; item?: RecordedItem; enhanceModel?: string }): Promise<void> {
  return translated(async () => {
    const row = input.item ? rowWithTake(input.row, input.item) : input.row;
    await storageFor(input.output).appendManifest(row);
    metricsHere().itemEnded(row, input.enhanceModel);
  });
}

/** The row with its take, group, placeholder values, seed and the length, ratio and resolution asked for. */
export function rowWithTake(row: ManifestRow, item: RecordedItem): ManifestRow {
  const { request } = item;
  const out: ManifestRow = { ...row };
  if (item.take !== undefined) out.take = item.take;
  if (item.group !== undefined) out.group = item.group;
  if (item.vars !== undefined) out.vars = item.vars;
  if (item.redoOf !== undefined) out.redo_of = item.redoOf;
  if (request.seed !== undefined) out.seed = request.seed;
  if (request.seconds !== undefined && /^\d+$/.test(request.seconds)) out.seconds = Number(request.seconds);
  const ratio = request.ratio ?? (request.size ? ratioOfSize(request.size) : undefined);
  if (ratio !== undefined) out.ratio = ratio;
  const resolution = resolutionOf(request);
  if (resolution !== undefined) out.resolution = resolution;
  return out;
}

/** An openai size as its aspect ratio: 1280x720 -> 16:9, 1024x1792 -> 4:7. */
export function ratioOfSize(size: string): string | undefined {
  const m = /^([1-9][0-9]*)x([1-9][0-9]*)$/.exec(size);
  if (!m) return undefined;
  const [w, h] = [Number(m[1]), Number(m[2])];
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const d = gcd(w, h);
  return `${w / d}:${h / d}`;
}
