// Where a job file names each model, kept while the items are expanded, so that a model the
// gateway's catalog lacks can be reported at the line that sets it (docs/preflight.md).
import type { Ctx } from './context';
import type { ModelSite } from './plan';
import type { Path } from './positions';
import type { JobFileData } from './schema';
import type { ItemSource } from './sources';

/** Sites kept per model: enough to find the line; a job of 10,000 rows naming one model keeps three. */
const SITES_PER_MODEL = 3;

/** Where an item's model came from (expand.ts pickParam's level). */
export type ModelLevel = 'matrix' | 'item' | 'model' | 'defaults';

export class ModelSites {
  private readonly sites = new Map<string, ModelSite[]>();

  constructor(
    private readonly data: JobFileData,
    private readonly ctx: Ctx,
  ) {}

  /** Whether a site of `model` at `where` is still worth its position (checked before looking it up: 200,000 items). */
  private wanted(model: string, where: string): boolean {
    const list = this.sites.get(model);
    return !list || (list.length < SITES_PER_MODEL && !list.some((s) => s.where === where));
  }

  private yaml(model: string, path: Path, where: string, anchor: 'value' | 'key' = 'value'): void {
    if (!this.wanted(model, where)) return;
    const { line, column } = this.ctx.pos.at(path, anchor);
    this.add({ model, at: `${this.ctx.file}:${line}:${column}`, where });
  }

  private add(site: ModelSite): void {
    if (!this.wanted(site.model, site.where)) return;
    this.sites.set(site.model, [...(this.sites.get(site.model) ?? []), site]);
  }

  /** One item's model, set at `level`; its `models.<name>` entry, if any, is noted once too. */
  item(model: string, level: ModelLevel, src: ItemSource): void {
    if (level === 'matrix') {
      const index = (this.data.matrix?.['model'] ?? []).findIndex((v) => String(v) === model);
      this.yaml(model, ['matrix', 'model', Math.max(0, index)], `matrix.model[${Math.max(0, index)}]`);
    } else if (level === 'defaults') {
      this.yaml(model, ['defaults', 'model'], 'defaults.model');
    } else {
      const where = src.label.startsWith('items[') ? `${src.label}.model` : 'items_from, column model';
      if (this.wanted(model, where)) {
        const at = src.locate(['model'], 'model');
        this.add({ model, at: `${at.file}:${at.line}:${at.column}`, where });
      }
    }
    if (this.data.models?.[model] !== undefined) this.yaml(model, ['models', model], `models.${model}`, 'key');
  }

  /** enhance.model, when the job enhances its prompts. */
  enhance(): void {
    const model = this.data.enhance?.model;
    if (model !== undefined) this.yaml(model, ['enhance', 'model'], 'enhance.model');
  }

  list(): ModelSite[] {
    return [...this.sites.values()].flat();
  }
}
