// The prompt rewrites of a job's enhance step, kept beside its outputs (docs/enhance.md): one record
// per item key under `.reelflow/rewrites/`, written whole (Storage.putRecord), the last write
// winning. A record is reused while the item's prompt and the enhance settings are the ones it was
// made from, so every attempt, run and worker of an item pays for one Messages call per prompt
// text; `reelflow enhance` shows the records before any render is paid for.
//
// One record per key rather than one appended log: a render looks up its own item with one read (a
// single GetObject on S3) instead of reading every item's rewrite, and two workers writing the same
// item never interleave. Records hold digests of the prompt and settings, never the API key.
import { createHash } from 'node:crypto';
import type { EnhanceSettings } from '../jobfile/plan';
import type { Storage } from './storage';
import { mapLimit } from './map-limit';
import { trustedCosts } from './spend-rows';

/** Characters of a rewrite kept: as the gateway client bounds a Messages answer (gateway/messages.ts). */
export const MAX_REWRITE_CHARS = 20_000;
/** A record is refused past this (a rewrite is at most 20,000 characters, a few bytes each). */
const MAX_RECORD_BYTES = 256 * 1024;
const RECORD_VERSION = 1;

export interface RewriteUsage {
  input_tokens?: number;
  output_tokens?: number;
}

/** Who paid for a rewrite: an item's render (its manifest row records the cost) or `reelflow enhance`. */
export type RewritePayer = 'render' | 'enhance';

/**
 * One Messages call paid for an item's rewrite, kept in the item's record so that no call is lost
 * to the spend (docs/costs.md): the record's own, and those of the records it replaced. `at` is the
 * record's `at` when it was made; a manifest row that counts the call names it (`rewrite_at`).
 */
export interface RewriteCall {
  at: string;
  by: RewritePayer;
  /** What the call cost when it was made (jobfile/prices.ts rewriteCostUsd); absent: the model had no price. */
  cost_usd?: number;
  cost_source?: 'usage' | 'estimated';
}

/** Calls a record keeps: an item's prompt rewritten this many times keeps the latest. */
export const MAX_RECORDED_CALLS = 200;

export interface RewriteRecord {
  v: typeof RECORD_VERSION;
  key: string;
  /** sha256 of the prompt the item had when it was rewritten. */
  prompt_sha256: string;
  /** settingsDigest() of the enhance settings it was rewritten with. */
  settings_sha256: string;
  /** The text the item's create sends; null when the gateway answered no text and the item keeps its prompt. */
  rewrite: string | null;
  /** The model that answered, as the gateway named it. */
  model: string;
  at: string;
  usage?: RewriteUsage;
  /** Every paid call of the item's rewrites, oldest first, this record's last. Absent in records from before. */
  calls?: RewriteCall[];
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export function promptDigest(prompt: string): string {
  return sha256(prompt);
}

/** What makes two rewrites of one prompt comparable: the model, its instructions and its budget. */
export function settingsDigest(enhance: EnhanceSettings): string {
  return sha256(JSON.stringify([enhance.model, enhance.system ?? null, enhance.maxTokens]));
}

/** The record's name: keys are the job's own (any characters), names are hex. */
function recordName(key: string): string {
  return `rewrites/${sha256(key)}.json`;
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** A record as read back: anything not shaped like one (edited, another version) counts as none. */
export function decodeRewrite(text: string, key: string): RewriteRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const r = value as Record<string, unknown>;
  const hex = (v: unknown) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);
  if (r.v !== RECORD_VERSION || r.key !== key || !hex(r.prompt_sha256) || !hex(r.settings_sha256)) return undefined;
  const rewrite = r.rewrite === null || (typeof r.rewrite === 'string' && r.rewrite.length > 0 && r.rewrite.length <= MAX_REWRITE_CHARS);
  if (!rewrite) return undefined;
  const usage = r.usage as Record<string, unknown> | undefined;
  const record: RewriteRecord = {
    v: RECORD_VERSION,
    key,
    prompt_sha256: r.prompt_sha256 as string,
    settings_sha256: r.settings_sha256 as string,
    rewrite: r.rewrite as string | null,
    model: typeof r.model === 'string' ? r.model.slice(0, 200) : '',
    at: typeof r.at === 'string' ? r.at.slice(0, 40) : '',
  };
  if (usage && typeof usage === 'object') record.usage = countsOf(usage);
  const calls = Array.isArray(r.calls) ? r.calls.flatMap(callOf).slice(-MAX_RECORDED_CALLS) : [];
  if (calls.length > 0) record.calls = calls;
  return record;
}

/** A call as read back: a malformed one counts as none (the record is reelflow's own, but on disk). */
function callOf(value: unknown): RewriteCall[] {
  if (value === null || typeof value !== 'object') return [];
  const c = value as Record<string, unknown>;
  if (typeof c.at !== 'string' || c.at.length > 40 || (c.by !== 'render' && c.by !== 'enhance')) return [];
  const call: RewriteCall = { at: c.at, by: c.by };
  const usd = c.cost_usd;
  if (typeof usd === 'number' && Number.isFinite(usd) && usd >= 0 && (c.cost_source === 'usage' || c.cost_source === 'estimated')) {
    call.cost_usd = usd;
    call.cost_source = c.cost_source;
  }
  return [call];
}

/** The record when it was made from this prompt with these settings: reusable as it is. */
export function madeFrom(record: RewriteRecord | undefined, prompt: string, enhance: EnhanceSettings): RewriteRecord | undefined {
  return record && record.prompt_sha256 === promptDigest(prompt) && record.settings_sha256 === settingsDigest(enhance) ? record : undefined;
}

export class RewriteStore {
  constructor(private readonly storage: Storage) {}

  /** Where the records are, for people. */
  get location(): string {
    return `${this.storage.location.replace(/\/?$/, '/')}.reelflow/rewrites`;
  }

  /** The item's latest record, whatever it was made from. */
  async latest(key: string): Promise<RewriteRecord | undefined> {
    const text = await this.storage.getRecord(recordName(key), MAX_RECORD_BYTES);
    return text === undefined ? undefined : decodeRewrite(text, key);
  }

  /** The item's record when it was made from this prompt with these settings: reusable as it is. */
  async find(key: string, prompt: string, enhance: EnhanceSettings): Promise<RewriteRecord | undefined> {
    return madeFrom(await this.latest(key), prompt, enhance);
  }

  /** Writes the record: the item's latest from now on. */
  async put(record: RewriteRecord): Promise<void> {
    await this.storage.putRecord(recordName(record.key), `${JSON.stringify(record)}\n`);
  }
}

/** A new record (its rewrite and usage bounded: they are a gateway's answer). */
export function rewriteRecord(input: {
  key: string;
  prompt: string;
  enhance: EnhanceSettings;
  rewrite: string | null;
  model: string;
  usage?: RewriteUsage;
  at?: Date;
  /** Who paid for it and what it cost; with the record it replaces, whose calls it keeps. */
  paid?: { by: RewritePayer; cost?: { usd: number; source: 'usage' | 'estimated' }; replaces?: RewriteRecord };
}): RewriteRecord {
  const at = (input.at ?? new Date()).toISOString();
  const { paid } = input;
  const call: RewriteCall | undefined = paid && {
    at,
    by: paid.by,
    ...(paid.cost ? { cost_usd: paid.cost.usd, cost_source: paid.cost.source } : {}),
  };
  return {
    v: RECORD_VERSION,
    key: input.key,
    prompt_sha256: promptDigest(input.prompt),
    settings_sha256: settingsDigest(input.enhance),
    rewrite: input.rewrite === null ? null : input.rewrite.slice(0, MAX_REWRITE_CHARS),
    model: input.model.slice(0, 200),
    at,
    ...(input.usage ? { usage: countsOf(input.usage) } : {}),
    ...(call ? { calls: [...(paid?.replaces?.calls ?? []), call].slice(-MAX_RECORDED_CALLS) } : {}),
  };
}

/** A paid rewrite call no manifest row counts (docs/costs.md), with the item it was made for. */
export interface UnrecordedRewrite extends RewriteCall {
  key: string;
}

/** Records read at once when the spend is summed (one GetObject each on S3). */
const READS_AT_ONCE = 16;

/**
 * The paid rewrite calls of these items that no manifest row counts: made by `reelflow enhance`, or
 * by a render whose item a job-wide cause then left not started (no row). A row counts a call when
 * its `rewrite_at` is the call's `at`. Records from before calls were kept add nothing.
 */
export async function unrecordedRewrites(
  store: RewriteStore,
  keys: Iterable<string>,
  rows: readonly { key: string; rewrite_at?: string; rewrite_cost_usd?: number }[],
): Promise<UnrecordedRewrite[]> {
  return notInRows(await rewriteCalls(store, keys), rows);
}

/** Every paid call the records of these items keep, by item key then time. */
export async function rewriteCalls(store: RewriteStore, keys: Iterable<string>): Promise<UnrecordedRewrite[]> {
  const found = await mapLimit([...new Set(keys)], READS_AT_ONCE, async (key) =>
    ((await store.latest(key))?.calls ?? []).map((c): UnrecordedRewrite => ({ ...c, key })),
  );
  return found.flat().sort((a, b) => a.key.localeCompare(b.key) || a.at.localeCompare(b.at));
}

/**
 * The calls that no row counts: a row names a call (its `rewrite_at`) and counts at least what the
 * call cost. A row that names a call and counts less (one planted with `rewrite_cost_usd: 0`) leaves
 * the call counted: nothing in the manifest takes a paid call out of the spend.
 */
export function notInRows(
  calls: readonly UnrecordedRewrite[],
  rows: readonly { key: string; rewrite_at?: string; rewrite_cost_usd?: number }[],
): UnrecordedRewrite[] {
  const counted = new Map<string, number>();
  for (const row of rows) {
    if (!row.rewrite_at) continue;
    const name = `${row.key}\u0000${row.rewrite_at}`;
    const usd = trustedCosts(row).rewriteCostUsd ?? 0;
    counted.set(name, Math.max(counted.get(name) ?? 0, usd));
  }
  return calls.filter((c) => {
    const usd = counted.get(`${c.key}\u0000${c.at}`);
    return usd === undefined || usd < (c.cost_usd ?? 0);
  });
}

/** The counts of a usage that are counts (whole, not negative): a gateway's other numbers are not kept. */
function countsOf(usage: { input_tokens?: unknown; output_tokens?: unknown }): RewriteUsage {
  return {
    ...(isCount(usage.input_tokens) ? { input_tokens: usage.input_tokens } : {}),
    ...(isCount(usage.output_tokens) ? { output_tokens: usage.output_tokens } : {}),
  };
}

/** The text an item's create sends: its rewrite, or its own prompt when the gateway gave none. */
export function textToRender(record: Pick<RewriteRecord, 'rewrite'>, prompt: string): string {
  return record.rewrite ?? prompt;
}
