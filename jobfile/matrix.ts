// The matrix: each key's values, checked like the parameter they set, and every combination of them.
import type { Ctx } from './context';
import { DEFAULT_MESSAGE } from './issues';
import { type JobFileData, PARAM_KEYS, type ParamKey, paramSchemas } from './schema';
import { BUILTIN_PLACEHOLDERS } from './settings';
import { show } from './text';

export type Scalar = string | number | boolean;

interface MatrixAxis {
  key: string;
  values: Scalar[];
}

export function matrixAxes(data: JobFileData, ctx: Ctx, vars: ReadonlyMap<string, string>): MatrixAxis[] {
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

/**
 * How many combinations the matrix makes, from its lists as written (before any is built or
 * checked), and their shape for messages (`100 x 100 x 100`; empty without a matrix).
 */
export function matrixSize(data: JobFileData): { combinations: number; shape: string } {
  const lengths = Object.values(data.matrix ?? {}).map((values) => values.length);
  return { combinations: lengths.reduce((a, b) => a * b, 1), shape: lengths.join(' x ') };
}

export function combinations(axes: readonly MatrixAxis[]): Map<string, Scalar>[] {
  let combos: Map<string, Scalar>[] = [new Map()];
  for (const axis of axes) {
    const next: Map<string, Scalar>[] = [];
    for (const c of combos) for (const v of axis.values) next.push(new Map([...c, [axis.key, v]]));
    combos = next;
  }
  return combos;
}
