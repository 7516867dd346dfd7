// The manifest's rows as bytes, both ways. Every reader of a manifest (the local file, S3's row
// objects and snapshot, and so every command and activity) decodes its rows here, with one schema:
// a handed job folder's manifest may hold anything, so a row that is not one reelflow writes (a
// field missing or of another type, a `file` that is not a name inside the output location, a line
// cut short) is skipped, and its reader is told where (file and line) and what is wrong.
import { z } from 'zod';
import { END_STATES } from '../../domain/end-states';
import type { ManifestRow } from './row';
import { objectNameProblem } from '../objects/names';

/** One manifest row as one line: JSON never contains a raw newline, so a line is a row. */
export function encodeManifestRow(row: ManifestRow): string {
  return `${JSON.stringify(row)}\n`;
}

/** A row a reader left out: where it is (`file:line`, or a row object's address) and what is wrong with it. */
export interface SkippedRow {
  where: string;
  problem: string;
}

const count = z.number().int().nonnegative();
/** Amounts of money: JSON has no NaN or Infinity, and zod's number refuses them (1e999 parses as Infinity). */
const usd = z.number().nonnegative();
const objectName = z.string().superRefine((name, ctx) => {
  const problem = objectNameProblem(name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** ManifestRow's fields (storage/manifest/row.ts). */
const rowFields = {
  key: z.string().min(1),
  id: z.string().nullable(),
  index: count,
  state: z.enum(END_STATES),
  model: z.string(),
  protocol: z.enum(['general', 'openai']),
  prompt: z.string(),
  enhanced_prompt: z.string().nullable().optional(),
  request_digest: z.string().optional(),
  task_id: z.string().nullable(),
  base_url: z.string().nullable(),
  create_base_url: z.string().nullable().optional(),
  download_base_url: z.string().nullable().optional(),
  created_at: z.string().nullable(),
  finished_at: z.string(),
  polls: count,
  file: objectName.nullable(),
  bytes: count.nullable(),
  sha256: z.string().nullable(),
  last_frame: z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), bytes: count, type: z.enum(['png', 'jpeg']) }).optional(),
  error: z.object({ kind: z.string(), message: z.string() }).nullable(),
  blocked_by: z.string().optional(),
  cost_usd: usd.optional(),
  cost_source: z.enum(['billed', 'estimated']).optional(),
  rewrite_cost_usd: usd.optional(),
  rewrite_cost_source: z.enum(['usage', 'estimated']).optional(),
  rewrite_at: z.string().optional(),
  take: z.number().int().positive().optional(),
  group: z.string().optional(),
  vars: z.record(z.string(), z.string()).optional(),
  redo_of: z.string().optional(),
  seed: z.number().int().optional(),
  seconds: z.number().nonnegative().optional(),
  ratio: z.string().optional(),
  resolution: z.string().optional(),
};

/** A row: its fields checked; fields it does not name (a later version's) kept as they are. */
const manifestRowSchema = z.looseObject(rowFields);

// The schema and the type are one shape: a field added to ManifestRow without its schema fails here.
type Decoded = z.infer<z.ZodObject<typeof rowFields>>;
const _sameShape: [Decoded extends ManifestRow ? true : false, ManifestRow extends Decoded ? true : false] = [true, true];
void _sameShape;

/** How many other problems of a row are named after its missing fields. */
const NAMED_PROBLEMS = 3;

/** What is wrong with a row, in one line: every missing field, then the first few other problems. */
function describeIssues(value: Record<string, unknown>, issues: readonly z.core.$ZodIssue[]): string {
  const missing: string[] = [];
  const other: string[] = [];
  for (const issue of issues) {
    const field = issue.path.map(String).join('.');
    if (issue.path.length === 1 && value[field] === undefined) missing.push(JSON.stringify(field));
    else {
      // zod's messages start with a capital ("Invalid input: expected string, received number").
      const message = issue.message.charAt(0).toLowerCase() + issue.message.slice(1);
      other.push(field === '' ? message : `${JSON.stringify(field)}: ${message}`);
    }
  }
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`missing ${missing.join(', ')}`);
  if (other.length > 0) {
    const more = other.length > NAMED_PROBLEMS ? ` (and ${other.length - NAMED_PROBLEMS} more)` : '';
    parts.push(other.slice(0, NAMED_PROBLEMS).join('; ') + more);
  }
  return `not a manifest row: ${parts.join('; ')}`;
}

/** One row's text, checked against the schema. */
export function decodeManifestRow(text: string): { row: ManifestRow } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'not JSON (cut short, or edited by hand)' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problem: 'not a manifest row: not a JSON object' };
  const parsed = manifestRowSchema.safeParse(value);
  if (!parsed.success) return { problem: describeIssues(value as Record<string, unknown>, parsed.error.issues) };
  return { row: parsed.data as ManifestRow };
}

export interface ParsedManifest {
  rows: ManifestRow[];
  skipped: SkippedRow[];
  /** Bytes of `text` up to and including the last newline: everything after is a torn tail. */
  completeLength: number;
  /** Newline-terminated lines in those bytes: where the next read's line numbers start. */
  lines: number;
}

/** Where a run of manifest bytes comes from: its file (a path or an address), and the number of its first line. */
export interface ManifestSource {
  file: string;
  firstLine: number;
}

/**
 * Parses JSON Lines. Only newline-terminated lines are rows: a crash mid-append can leave a torn
 * last line (which the next append ends with a newline), and a writer may be appending right now.
 * It is not read, and is reported; so is every complete line that is not a row.
 */
export function parseManifest(buf: Buffer, source: ManifestSource): ParsedManifest {
  const completeLength = buf.lastIndexOf(0x0a) + 1;
  const rows: ManifestRow[] = [];
  const skipped: SkippedRow[] = [];
  let start = 0;
  let lines = 0;
  while (start < completeLength) {
    const end = buf.indexOf(0x0a, start);
    const line = buf.toString('utf8', start, end).trim();
    start = end + 1;
    lines += 1;
    if (line === '') continue;
    const decoded = decodeManifestRow(line);
    if ('row' in decoded) rows.push(decoded.row);
    else skipped.push({ where: `${source.file}:${source.firstLine + lines - 1}`, problem: decoded.problem });
  }
  if (buf.subarray(completeLength).toString('utf8').trim() !== '') {
    skipped.push({
      where: `${source.file}:${source.firstLine + lines}`,
      problem: 'an incomplete last line, without its newline (cut short, or still being written)',
    });
  }
  return { rows, skipped, completeLength, lines };
}

/**
 * The sha256 a manifest vouches for: the latest succeeded row naming this file with this size.
 * `file` may be the object name or the location the write returned.
 */
export class ManifestDigests {
  private readonly byFile = new Map<string, { bytes: number | null; sha256: string }>();

  add(rows: Iterable<ManifestRow>): void {
    for (const row of rows) {
      if (row.state === 'succeeded' && row.file && row.sha256) {
        this.byFile.set(row.file, { bytes: row.bytes, sha256: row.sha256 });
      }
    }
  }

  clear(): void {
    this.byFile.clear();
  }

  lookup(names: string[], bytes: number): string | undefined {
    for (const name of names) {
      const hit = this.byFile.get(name);
      if (hit && (hit.bytes === null || hit.bytes === bytes)) return hit.sha256;
    }
    return undefined;
  }
}
