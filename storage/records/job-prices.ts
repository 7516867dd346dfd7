// The prices a job was priced with when it ran, kept beside its manifest: one of the location's
// records (`.reelflow/prices.json`, Storage.putRecord: written whole, never through a link). The
// worker that plans a run writes it (activities/plan.ts), whichever way the run started (`run` with
// the gateway's prices it read, a schedule with those its worker read); `status`, `results` and the
// report read it (client/jobs.ts), so they show the estimate the run showed without asking the
// gateway, with no key, wherever the output can be read (docs/costs.md).
import type { ModelPrice, PriceTable } from '../../jobfile/prices';
import type { RecordStore } from './store';

/** The record's name (under the location's `.reelflow/`). */
export const JOB_PRICES_RECORD = 'prices.json';
/** A job uses a handful of models: this leaves room for thousands. */
const MAX_JOB_PRICES_BYTES = 1 << 20;
const MAX_SOURCE_CHARS = 400;
const AMOUNTS = ['perVideo', 'perSecond', 'perMillionInputTokens', 'perMillionOutputTokens', 'perCall', 'defaultSeconds'] as const;

/**
 * Records the prices a run priced its job with: each model the run uses (`used`) as `prices` has it
 * (left out when the run had no price for it); a model the run does not use (a redo of some takes)
 * keeps what an earlier run recorded. Nothing is written when nothing changes.
 */
export async function recordJobPrices(storage: RecordStore, prices: PriceTable, used: Iterable<string>): Promise<void> {
  const before = await readJobPrices(storage);
  const after: PriceTable = { ...before };
  for (const model of used) {
    const price = prices[model];
    if (price) after[model] = price;
    else delete after[model];
  }
  const text = `${JSON.stringify({ prices: sorted(after) })}\n`;
  if (before === undefined && Object.keys(after).length === 0) return;
  if (before !== undefined && text === `${JSON.stringify({ prices: sorted(before) })}\n`) return;
  await storage.putRecord(JOB_PRICES_RECORD, text);
}

/**
 * The prices recorded at the location; undefined when there are none, or the record cannot be read
 * or is not one (then the job file's prices are used: the record only saves asking the gateway). An
 * entry that is not a price is left out.
 */
export async function readJobPrices(storage: RecordStore): Promise<PriceTable | undefined> {
  let text: string | undefined;
  try {
    text = await storage.getRecord(JOB_PRICES_RECORD, MAX_JOB_PRICES_BYTES);
  } catch {
    return undefined;
  }
  return text === undefined ? undefined : decodeJobPrices(text);
}

export function decodeJobPrices(text: string): PriceTable | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  const prices = isMap(doc) ? doc.prices : undefined;
  if (!isMap(prices)) return undefined;
  const table: PriceTable = {};
  for (const [model, entry] of Object.entries(prices)) {
    if (model === '__proto__') continue;
    const price = modelPrice(entry);
    if (price) table[model] = price;
  }
  return table;
}

function modelPrice(entry: unknown): ModelPrice | undefined {
  if (!isMap(entry) || typeof entry.source !== 'string' || entry.source.length > MAX_SOURCE_CHARS) return undefined;
  const price: ModelPrice = { source: entry.source };
  for (const field of AMOUNTS) {
    const value = entry[field];
    if (value === undefined) continue;
    if (!isAmount(value)) return undefined;
    price[field] = value;
  }
  const byResolution = entry.perSecondByResolution;
  if (byResolution !== undefined) {
    if (!isMap(byResolution) || !Object.values(byResolution).every(isAmount)) return undefined;
    price.perSecondByResolution = byResolution as Record<string, number>;
  }
  return price;
}

function isAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Models in name order: the same prices are the same text. */
function sorted(table: PriceTable): PriceTable {
  return Object.fromEntries(Object.entries(table).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
