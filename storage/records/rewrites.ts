// The prompt rewrites of a job's enhance step, kept beside its outputs (docs/enhance.md): one record
// per prompt text and enhance settings under `.reelflow/rewrites/`, written whole
// (Storage.putRecord), the last write winning. A record is shared by every item, take, attempt, run
// and worker that sends that prompt with those settings, so each prompt text costs one Messages
// call; `reelflow enhance` shows the records before any render is paid for.
//
// One record per prompt text rather than one appended log: a render looks up its rewrite with one
// read (a single GetObject on S3). Records of earlier versions were one per item key (v1): they are
// still reused by their item and their paid calls still counted. Records hold digests of the prompt
// and settings, never the API key.
import { createHash } from 'node:crypto';
import type { EnhanceSettings } from '../../jobfile/plan';
import type { ObjectStore } from '../objects/store';
import type { RecordStore } from './store';
import { mapLimit } from '../objects/map-limit';
import { trustedCosts } from '../manifest/spend-rows';

/** Characters of a rewrite kept: as the gateway client bounds a Messages answer (gateway/messages.ts). */
export const MAX_REWRITE_CHARS = 20_000;
/** A record is refused past this (a rewrite is at most 20,000 characters, a few bytes each). */
const MAX_RECORD_BYTES = 256 * 1024;
/** 2: one record per prompt text; 1: one per item key, from before (read, never written). */
const RECORD_VERSION = 2;
type RecordVersion = 1 | 2;

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
  /** The item whose render paid for the call (its row names it with rewrite_at); absent for `reelflow enhance`'s. */
  key?: string;
  /** What the call cost when it was made (jobfile/prices.ts rewriteCostUsd); absent: the model had no price. */
  cost_usd?: number;
  cost_source?: 'usage' | 'estimated';
}

/** Calls a record keeps: an item's prompt rewritten this many times keeps the latest. */
export const MAX_RECORDED_CALLS = 200;

export interface RewriteRecord {
  v: RecordVersion;
  /** v1 only: the item the record was made for (v2 records are the prompt's, whoever asked). */
  key?: string;
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

/**
 * What names the rewrite of one prompt text with one enhance settings: its record's name, and the
 * single-flight that makes concurrent takes of the prompt share one call (workflows/render.ts).
 */
export function rewriteId(prompt: string, enhance: EnhanceSettings): string {
  return idOf(promptDigest(prompt), settingsDigest(enhance));
}

const idOf = (prompt: string, settings: string): string => sha256(`${prompt}\n${settings}`);

const FOLDER = 'rewrites';
const recordName = (id: string): string => `${FOLDER}/${id}.json`;
/** A v1 record's name: the sha256 of the item key. */
const legacyName = (key: string): string => recordName(sha256(key));

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * A record as read back from the name `rewrites/<id>.json`: anything not shaped like one (edited,
 * another version) or not the record its name says counts as none.
 */
export function decodeRewrite(text: string, id: string): RewriteRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const r = value as Record<string, unknown>;
  const hex = (v: unknown) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);
  if (!hex(r.prompt_sha256) || !hex(r.settings_sha256)) return undefined;
  const named =
    r.v === 2
      ? idOf(r.prompt_sha256 as string, r.settings_sha256 as string) === id
      : r.v === 1 && typeof r.key === 'string' && sha256(r.key) === id;
  if (!named) return undefined;
  const rewrite = r.rewrite === null || (typeof r.rewrite === 'string' && r.rewrite.length > 0 && r.rewrite.length <= MAX_REWRITE_CHARS);
  if (!rewrite) return undefined;
  const usage = r.usage as Record<string, unknown> | undefined;
  const record: RewriteRecord = {
    v: r.v as RecordVersion,
    ...(r.v === 1 ? { key: r.key as string } : {}),
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
  if (typeof c.key === 'string' && c.key.length <= 1000) call.key = c.key;
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

/** Records read at once when the spend is summed (one GetObject each on S3). */
const READS_AT_ONCE = 16;

export class RewriteStore {
  constructor(private readonly storage: RecordStore & Pick<ObjectStore, 'location'>) {}

  /** Where the records are, for people. */
  get location(): string {
    return `${this.storage.location.replace(/\/?$/, '/')}.reelflow/${FOLDER}`;
  }

  private async read(name: string, id: string): Promise<RewriteRecord | undefined> {
    const text = await this.storage.getRecord(name, MAX_RECORD_BYTES);
    return text === undefined ? undefined : decodeRewrite(text, id);
  }

  /** The record of this prompt text with these settings, reusable as it is: every item sending it shares it. */
  latest(prompt: string, enhance: EnhanceSettings): Promise<RewriteRecord | undefined> {
    const id = rewriteId(prompt, enhance);
    return this.read(recordName(id), id);
  }

  /**
   * The rewrite to reuse for an item sending this prompt: the prompt's record, else the item's own
   * record from before records were kept per prompt text (v1), when it was made from this prompt.
   */
  async find(prompt: string, enhance: EnhanceSettings, key?: string): Promise<RewriteRecord | undefined> {
    const record = await this.latest(prompt, enhance);
    if (record || key === undefined) return record;
    return madeFrom(await this.read(legacyName(key), sha256(key)), prompt, enhance);
  }

  /** Writes the record: its prompt text's from now on. */
  async put(record: RewriteRecord): Promise<void> {
    const id = idOf(record.prompt_sha256, record.settings_sha256);
    await this.storage.putRecord(recordName(id), `${JSON.stringify(record)}\n`);
  }

  /** Every record kept at the location, v1 ones included: the ledger of the job's paid rewrite calls. */
  async all(): Promise<RewriteRecord[]> {
    const names = (await this.storage.listRecords(FOLDER)).filter((n) => /^rewrites\/[0-9a-f]{64}\.json$/.test(n));
    const read = await mapLimit(names, READS_AT_ONCE, (name) => this.read(name, name.slice(FOLDER.length + 1, -'.json'.length)));
    return read.filter((r): r is RewriteRecord => r !== undefined);
  }
}

/** A new record (its rewrite and usage bounded: they are a gateway's answer). */
export function rewriteRecord(input: {
  /** The item whose render pays for it: its row names the call. */
  key?: string;
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
    ...(paid.by === 'render' && input.key !== undefined ? { key: input.key } : {}),
    ...(paid.cost ? { cost_usd: paid.cost.usd, cost_source: paid.cost.source } : {}),
  };
  return {
    v: RECORD_VERSION,
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

/**
 * The paid rewrite calls kept at the location that no manifest row counts: made by `reelflow
 * enhance`, or by a render whose item a job-wide cause then left not started (no row). A row counts
 * a call when its key and `rewrite_at` are the call's. Records from before calls were kept add nothing.
 */
export async function unrecordedRewrites(
  store: RewriteStore,
  rows: readonly { key: string; rewrite_at?: string; rewrite_cost_usd?: number }[],
): Promise<UnrecordedRewrite[]> {
  return notInRows(await rewriteCalls(store), rows);
}

/** Every paid call the records keep, by the item that paid (none: `reelflow enhance`'s) then time. */
export async function rewriteCalls(store: RewriteStore): Promise<UnrecordedRewrite[]> {
  const calls = (await store.all()).flatMap((record) =>
    (record.calls ?? []).map((c): UnrecordedRewrite => ({ ...c, key: c.key ?? record.key ?? '' })),
  );
  return calls.sort((a, b) => a.key.localeCompare(b.key) || a.at.localeCompare(b.at));
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
