// items_from: rows of a .csv (RFC 4180, header row), .jsonl (one object a line) or .txt (one prompt a
// line) file, each becoming one item. Blank lines are skipped. Pure parsing; no schema checks here.
// Rows are counted before any is built, so a file of a million rows costs no more than reading it
// (docs/limits-input.md).
import type { Position } from './positions';

export interface Cell {
  value: string;
  line: number;
  column: number;
}

export interface Row {
  /** Position of the row's start. */
  line: number;
  column: number;
  /** Values by column name (CSV header, JSONL key, or `prompt` for .txt). */
  values: Record<string, unknown>;
  /** Where each value starts, by column name. */
  at: Record<string, Position>;
}

export interface ParseProblem {
  line: number;
  column: number;
  message: string;
}

export interface RowsResult {
  rows: Row[];
  problems: ParseProblem[];
  /** Where the first row past `maxRows` starts, and its number; nothing was parsed then. */
  more?: Position & { row: number };
  /** Where each column is named: the CSV header's cells (JSONL names its keys on every line). */
  columns?: Record<string, Position>;
}

const isBlank = (record: readonly Cell[]): boolean => record.length === 1 && record[0]?.value === '';

/**
 * RFC 4180: comma-separated, `"` quotes fields, `""` is a quote, quoted fields may span lines.
 * Records one at a time (blank lines are none), so that counting them keeps none in memory.
 */
function* csvRecords(text: string, report: (problem: ParseProblem) => void): Generator<Cell[]> {
  let line = 1;
  let col = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let record: Cell[] = [];
  const n = text.length;
  while (i < n) {
    // One field.
    const start = { line, column: col };
    let value = '';
    if (text[i] === '"') {
      i++;
      col++;
      let closed = false;
      while (i < n) {
        const c = text[i] as string;
        if (c === '"') {
          if (text[i + 1] === '"') {
            value += '"';
            i += 2;
            col += 2;
            continue;
          }
          i++;
          col++;
          closed = true;
          break;
        }
        if (c === '\n') {
          line++;
          col = 1;
        } else col++;
        value += c;
        i++;
      }
      if (!closed) {
        report({ ...start, message: 'a quoted field is not closed: add the closing "' });
        record = [];
        break;
      }
      if (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') {
        report({ line, column: col, message: 'after a closing quote comes a comma or the end of the line' });
        while (i < n && text[i] !== ',' && text[i] !== '\n') {
          i++;
          col++;
        }
      }
    } else {
      while (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
        if (text[i] === '"') {
          report({
            line,
            column: col,
            message: 'a quote inside an unquoted field: quote the whole field and double the quote ("")',
          });
        }
        value += text[i];
        i++;
        col++;
      }
    }
    record.push({ value, ...start });
    if (i >= n) break;
    if (text[i] === ',') {
      i++;
      col++;
      if (i >= n) record.push({ value: '', line, column: col });
      continue;
    }
    // End of record.
    i += text[i] === '\r' ? 2 : 1;
    if (!isBlank(record)) yield record;
    record = [];
    line++;
    col = 1;
  }
  if (record.length > 0 && !isBlank(record)) yield record;
}

export function parseCsvCells(text: string): { records: Cell[][]; problems: ParseProblem[] } {
  const problems: ParseProblem[] = [];
  const records = [...csvRecords(text, (p) => problems.push(p))];
  return { records, problems };
}

export function csvRows(text: string): RowsResult {
  const { records, problems } = parseCsvCells(text);
  const [header, ...body] = records;
  const rows: Row[] = [];
  if (!header) {
    problems.push({ line: 1, column: 1, message: 'the CSV file is empty: it needs a header row naming item keys, such as "id,prompt"' });
    return { rows, problems };
  }
  const names = header.map((c) => c.value.trim());
  const columns = Object.create(null) as Record<string, Position>; // a column may be named "constructor"
  header.forEach((c, k) => {
    const name = names[k] ?? '';
    if (name === '') problems.push({ line: c.line, column: c.column, message: `header column ${k + 1} has no name` });
    else if (columns[name]) problems.push({ line: c.line, column: c.column, message: `header names column "${name}" twice` });
    else columns[name] = { line: c.line, column: c.column };
  });
  for (const cells of body) {
    const first = cells[0] as Cell;
    if (cells.length !== names.length) {
      problems.push({ line: first.line, column: first.column, message: `row has ${cells.length} fields, the header has ${names.length}` });
      continue;
    }
    const row: Row = { line: first.line, column: first.column, values: {}, at: {} };
    cells.forEach((c, k) => {
      const name = names[k] ?? '';
      if (c.value === '') return; // an empty cell means "not set"
      row.values[name] = c.value;
      row.at[name] = { line: c.line, column: c.column };
    });
    rows.push(row);
  }
  return { rows, problems, columns };
}

/** The file's lines that are not blank, one at a time, with their number and first column. */
function* nonBlankLines(text: string): Generator<{ text: string; line: number; column: number }> {
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (let line = 1; start <= text.length; line++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const lineText = text.slice(start, text[end - 1] === '\r' ? end - 1 : end);
    start = end + 1;
    if (lineText.trim() === '') continue;
    yield { text: lineText, line, column: lineText.length - lineText.trimStart().length + 1 };
  }
}

export function jsonlRows(text: string): RowsResult {
  const rows: Row[] = [];
  const problems: ParseProblem[] = [];
  for (const { text: lineText, line, column } of nonBlankLines(text)) {
    let value: unknown;
    try {
      value = JSON.parse(lineText);
    } catch (e) {
      const text = (e as Error).message;
      const at = /at position (\d+)/.exec(text);
      const reason = text.replace(/ in JSON at position \d+.*$/, '').replace(/ \(line \d+ column \d+\)$/, '');
      problems.push({ line, column: at ? Number(at[1]) + 1 : column, message: `not valid JSON: ${reason}` });
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push({ line, column, message: 'each line must be a JSON object such as {"prompt": "..."}' });
      continue;
    }
    const row: Row = { line, column, values: value as Record<string, unknown>, at: {} };
    for (const key of Object.keys(row.values)) {
      const found = lineText.indexOf(JSON.stringify(key));
      row.at[key] = { line, column: found >= 0 ? found + 1 : column };
    }
    rows.push(row);
  }
  return { rows, problems };
}

export function txtRows(text: string): RowsResult {
  const rows: Row[] = [];
  for (const { text: lineText, line, column } of nonBlankLines(text)) {
    const pos = { line, column };
    rows.push({ ...pos, values: { prompt: lineText.trim() }, at: { prompt: pos } });
  }
  return { rows, problems: [] };
}

export type RowFormat = 'csv' | 'jsonl' | 'txt';

export function formatOf(file: string): RowFormat | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(file)?.[1]?.toLowerCase();
  if (ext === 'csv') return 'csv';
  if (ext === 'jsonl' || ext === 'ndjson') return 'jsonl';
  if (ext === 'txt') return 'txt';
  return undefined;
}

/**
 * Where the row after the first `maxRows` starts, and its number; undefined when the file has no
 * more. Rows are counted one at a time and none is kept: a million-row file is refused at the cost of
 * reading it, not of building its rows.
 */
function rowPast(text: string, format: RowFormat, maxRows: number): RowsResult['more'] {
  if (format !== 'csv') {
    let count = 0;
    for (const l of nonBlankLines(text)) if (++count > maxRows) return { line: l.line, column: l.column, row: count };
    return undefined;
  }
  let count = -1; // the header is no row
  for (const record of csvRecords(text, () => undefined)) {
    if (++count > maxRows) {
      const first = record[0] as Cell;
      return { line: first.line, column: first.column, row: count };
    }
  }
  return undefined;
}

/** The file's rows; none when it has more than `maxRows` (then `more` says where the first extra starts). */
export function parseRows(text: string, format: RowFormat, maxRows = Infinity): RowsResult {
  const more = rowPast(text, format, maxRows);
  if (more) return { rows: [], problems: [], more };
  if (format === 'csv') return csvRows(text);
  if (format === 'jsonl') return jsonlRows(text);
  return txtRows(text);
}
