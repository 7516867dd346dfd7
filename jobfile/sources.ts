// Where items come from: the `items` list and the rows of `items_from`, each with a way to point at
// its own values in the source file.
import { isAbsolute, join, resolve } from 'node:path';
import type { Ctx } from './context';
import { issuesToErrors, parseOptions } from './issues';
import { formatOf, parseRows, type Row, type RowFormat } from './items-from';
import { placeholderNames } from './placeholders';
import type { JobFileError } from './plan';
import { type Anchor, namingKey, type Path, type Position } from './positions';
import { type ItemInput, ITEM_KEYS, itemSchema, type JobFileData } from './schema';
import { readScopeProblem } from './read-scope';
import { BUILTIN_PLACEHOLDERS } from './settings';
import { nearest, NotUtf8Error, show } from './text';
import { MAX_ITEMS } from './expand';

export interface ItemSource {
  item: ItemInput;
  /** `items[2]` or `prompts.csv line 4`. */
  label: string;
  /** Error at a path inside the item (`['seconds']`, `['references', 0, 'image']`, `[]` for the item). */
  locate: (path: Path, message: string, anchor?: Anchor) => JobFileError;
  /** Per-row placeholder values (items_from columns that are not item keys). */
  rowVars: Map<string, string>;
}

export function yamlSources(data: JobFileData, ctx: Ctx): ItemSource[] {
  return (data.items ?? []).map((item, i) => ({
    item,
    label: `items[${i}]`,
    locate: (path, message, anchor) => ctx.pos.error(['items', i, ...path], message, anchor),
    rowVars: new Map<string, string>(),
  }));
}

/**
 * A column that adds a reference: `image`, `video`, `audio`, or one of them with a number
 * (`image_2`, `video_1`) for several of a kind; each non-empty cell is one reference, in column
 * order (docs/jobfiles.md).
 */
const REFERENCE_COLUMN = /^(image|video|audio)(?:_[0-9]{1,3})?$/;

/** Where a path inside the row's item points: the cell of that key, or of the reference's own column. */
function rowLocator(file: string, row: Row, referenceAt: readonly ReferenceCell[]) {
  return (path: Path, message: string): JobFileError => {
    const cell = path[0] === 'references' && typeof path[1] === 'number' ? referenceAt[path[1]] : undefined;
    if (cell?.column !== undefined) return { file, ...cell.at, ...namingKey([cell.column], message) };
    const at = cell?.at ?? row.at[String(path[0])] ?? { line: row.line, column: row.column };
    return { file, ...at, ...namingKey(path, message) };
  };
}

/** Where a row's reference was written: its column (`image_2`), or the JSONL `references` list. */
interface ReferenceCell {
  at: Position;
  column?: string;
}

/** Placeholder names the templates that fill a row's item use: its prompt, its references, output.name, shared references. */
function placeholdersInUse(data: JobFileData, rows: readonly Row[]): Set<string> {
  const used = new Set<string>();
  const add = (template: unknown) => {
    if (typeof template === 'string') for (const name of placeholderNames(template)) used.add(name);
  };
  add(data.output.name);
  for (const ref of data.defaults?.references ?? []) add(ref.image ?? ref.video ?? ref.audio);
  for (const row of rows) {
    for (const [col, value] of Object.entries(row.values)) {
      if (col === 'prompt' || REFERENCE_COLUMN.test(col)) add(value);
      else if (col === 'references' && Array.isArray(value)) {
        for (const ref of value as unknown[]) if (ref && typeof ref === 'object') Object.values(ref).forEach(add);
      }
    }
  }
  return used;
}

/** Whether a column is data the item reads itself (a key, a reference, a built-in name), not a placeholder. */
function isItemColumn(col: string): boolean {
  return ITEM_KEYS.includes(col) || REFERENCE_COLUMN.test(col) || (BUILTIN_PLACEHOLDERS as readonly string[]).includes(col);
}

/**
 * Columns that no template uses and that are spelled like an item key the file lacks (`promt`),
 * with the key they mean. Their rows are read as that key: the typo is reported once, at the header,
 * and the rows' own checks (a missing prompt, the prompt's placeholders) then say what they would
 * say of the file as meant, instead of a second and third error caused by the first.
 */
function itemKeyTypos(rows: readonly Row[], used: ReadonlySet<string>): Map<string, string> {
  const columns = new Set(rows.flatMap((row) => Object.keys(row.values)));
  const meant = new Map<string, string>();
  for (const col of columns) {
    if (isItemColumn(col) || used.has(col)) continue;
    const key = nearest(col, ITEM_KEYS);
    if (key !== undefined && !columns.has(key)) meant.set(col, key);
  }
  return meant;
}

/**
 * A column that is no item key and that no template uses is a typo (`modle`, `secnods`): an error
 * with the nearest name, once per column, where it is named (the CSV header, or its first JSONL line).
 * A column spelled like a placeholder that a template uses but nothing provides is not the typo:
 * the template is, and the placeholder's own error points there with this column's name.
 */
function checkUnusedColumns(
  ctx: Ctx,
  display: string,
  format: RowFormat,
  rows: readonly Row[],
  columns: Record<string, Position> | undefined,
  used: ReadonlySet<string>,
  provided: ReadonlySet<string>,
): void {
  const firstAt = new Map<string, Position>();
  for (const row of rows) for (const col of Object.keys(row.values)) if (!firstAt.has(col)) firstAt.set(col, row.at[col] ?? row);
  const builtIn = BUILTIN_PLACEHOLDERS as readonly string[];
  for (const [col, at] of firstAt) {
    if (isItemColumn(col) || used.has(col)) continue;
    const known = [...ITEM_KEYS.filter((k) => format === 'jsonl' || k !== 'references'), 'image', 'video', 'audio'];
    const inUse = [...used].filter((u) => !builtIn.includes(u));
    const hint = nearest(col, [...known, ...inUse]);
    if (hint !== undefined && inUse.includes(hint) && !provided.has(hint) && !firstAt.has(hint)) continue;
    const what = format === 'csv' ? 'column' : 'key';
    const advice = hint
      ? `did you mean "${hint}"?`
      : `known item keys and placeholders in use: ${[...known, ...inUse.map((u) => `{${u}}`)].join(', ')}`;
    const where = columns?.[col] ?? at;
    ctx.errors.push({
      file: display,
      line: where.line,
      column: where.column,
      message: `${what} "${col}" is not an item key, and no prompt, reference or output.name uses it as {${col}}; ${advice}`,
    });
  }
}

/** How many rows the job has room for, and why (for the message when a file has more). */
export interface RowRoom {
  rows: number;
  combinations: number;
  listed: number;
}

export function rowSources(data: JobFileData, ctx: Ctx, room: RowRoom): ItemSource[] {
  const spec = data.items_from;
  if (!spec) return [];
  const fileAt = ['items_from', 'file'];
  const display = isAbsolute(spec.file) ? spec.file : join(relDir(ctx.file), spec.file);
  const format = spec.format ?? formatOf(spec.file);
  if (!format) {
    ctx.errors.push(
      ctx.pos.error(fileAt, `cannot tell the format of "${spec.file}": use a .csv, .jsonl or .txt file, or set items_from.format`),
    );
    return [];
  }
  const abs = resolve(ctx.dir, spec.file);
  const outOfScope = readScopeProblem(ctx, abs, false, (m) => ctx.pos.error(fileAt, m));
  if (outOfScope) {
    ctx.errors.push(ctx.pos.error(fileAt, outOfScope));
    return [];
  }
  const text = ctx.fs.readText(abs);
  if (text instanceof NotUtf8Error) {
    ctx.errors.push({ file: display, line: text.line, column: text.column, message: text.message });
    return [];
  }
  if (text instanceof Error) {
    ctx.errors.push(ctx.pos.error(fileAt, `items_from file "${spec.file}" cannot be read: ${text.message} (looked for ${abs})`));
    return [];
  }
  const { rows, problems, more, columns } = parseRows(text, format, room.rows);
  for (const p of problems) ctx.errors.push({ file: display, line: p.line, column: p.column, message: p.message });
  if (more) {
    const others = [
      room.combinations > 1 ? `${room.combinations} matrix combinations each` : '',
      room.listed > 0 ? `${room.listed} item${room.listed === 1 ? '' : 's'} in items` : '',
    ].filter(Boolean);
    ctx.errors.push({
      file: display,
      line: more.line,
      column: more.column,
      message:
        `row ${more.row} is one row too many: a job has at most ${MAX_ITEMS} items` +
        (others.length > 0 ? `, and with ${others.join(' and ')} that leaves room for ${room.rows} rows` : '') +
        '; split the file into several jobs',
    });
    return [];
  }
  if (rows.length === 0 && problems.length === 0) {
    ctx.errors.push(ctx.pos.error(fileAt, `items_from file "${spec.file}" has no rows`));
  }
  const typos = itemKeyTypos(rows, placeholdersInUse(data, rows));
  const asMeant = typos.size === 0 ? rows : rows.map((row) => readAsMeant(row, typos));
  const provided = new Set([...Object.keys(data.vars ?? {}), ...Object.keys(data.matrix ?? {})]);
  checkUnusedColumns(ctx, display, format, rows, columns, placeholdersInUse(data, asMeant), provided);
  const reported = new Set<string>();
  const out: ItemSource[] = [];
  for (const row of asMeant) {
    const obj: Record<string, unknown> = {};
    const refs: Record<string, unknown>[] = [];
    const referenceAt: ReferenceCell[] = [];
    const locate = rowLocator(display, row, referenceAt);
    const rowVars = new Map<string, string>();
    let bad = false;
    for (const [col, value] of Object.entries(row.values)) {
      if (ITEM_KEYS.includes(col)) {
        obj[col] =
          format === 'csv' && (col === 'generate_audio' || col === 'watermark') && (value === 'true' || value === 'false')
            ? value === 'true'
            : value;
      } else if (REFERENCE_COLUMN.test(col)) {
        refs.push({ [col.replace(/_[0-9]+$/, '')]: value });
        referenceAt.push({ at: row.at[col] ?? row, column: col });
      } else if ((BUILTIN_PLACEHOLDERS as readonly string[]).includes(col)) {
        if (!reported.has(col)) ctx.errors.push(locate([col], `column "${col}" would hide the built-in placeholder {${col}}; rename it`));
        reported.add(col);
        bad = true;
      } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
        rowVars.set(col, String(value));
      } else {
        ctx.errors.push(
          locate(
            [col],
            `"${col}" is not an item key, so it is a placeholder value and must be text, a number or true/false, got ${show(value)}`,
          ),
        );
        bad = true;
      }
    }
    if (refs.length > 0) {
      const listed = Array.isArray(obj.references) ? (obj.references as unknown[]) : [];
      referenceAt.unshift(...listed.map(() => ({ at: row.at.references ?? row })));
      obj.references = [...listed, ...refs];
    }
    const parsed = itemSchema.safeParse(obj, parseOptions);
    if (!parsed.success) {
      ctx.errors.push(...issuesToErrors(parsed.error.issues, itemSchema, locate, [], 'this row'));
      continue;
    }
    if (bad) continue;
    out.push({ item: parsed.data, label: `${display} line ${row.line}`, locate, rowVars });
  }
  return out;
}

/** The row with each misspelt item-key column under the key it means (the typo is reported once, at the header). */
function readAsMeant(row: Row, typos: ReadonlyMap<string, string>): Row {
  const rename = (col: string) => typos.get(col) ?? col;
  return {
    ...row,
    values: Object.fromEntries(Object.entries(row.values).map(([col, v]) => [rename(col), v])),
    at: Object.fromEntries(Object.entries(row.at).map(([col, p]) => [rename(col), p])),
  };
}

function relDir(file: string): string {
  const i = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  return i < 0 ? '' : file.slice(0, i);
}
