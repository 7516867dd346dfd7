// One prompt text's rewrite, paid for once (docs/enhance.md): the stored record of the prompt with
// these enhance settings is reused by every item and take that sends it; otherwise Messages is asked
// once and the answer stored before it is returned. Shared by the render's enhance activity and
// `reelflow enhance`, so both find and leave the same records. No Temporal here.
import { redact, type MessageResult } from '../gateway';
import type { EnhanceSettings } from '../jobfile/plan';
import { rewriteCostUsd, type RewriteCost, type RewritePrice } from '../jobfile/prices';
import { rewriteRecord, type RewritePayer, type RewriteRecord, type RewriteStore, type RewriteUsage } from '../storage/records/rewrites';

export interface RewriteInput {
  /** The item asking: a call made now is its render's (its row names it); its record from before per-prompt records is reused. */
  key?: string;
  prompt: string;
  enhance: EnhanceSettings;
  /** Absent: nothing to look up or keep (a workflow from before the store); Messages is asked. */
  store?: RewriteStore;
  /** The Messages call; made only when no reusable record exists (or `again`). */
  ask: (input: { model: string; maxTokens: number; system?: string; prompt: string }) => Promise<MessageResult>;
  /** Ask again even when a reusable record exists (`--re-enhance`); the new record wins. */
  again?: boolean;
  /**
   * Given: a store that cannot be written after Messages answered is reported here and the paid
   * answer still returned (a render then uses it). Absent: the failure is thrown.
   */
  onStoreFailed?: (error: unknown) => void;
  /**
   * Who pays for a call made now, and its price from the answer's usage: the record keeps the call,
   * with those its item's earlier records kept, so that its spend is never lost (docs/costs.md).
   */
  payer?: { by: RewritePayer; priceOf: (usage: RewriteUsage | undefined) => RewriteCost | undefined };
}

export interface Rewritten {
  record: RewriteRecord;
  /** Found in the store: no Messages call was made. */
  reused: boolean;
}

export async function rewriteOnce(input: RewriteInput): Promise<Rewritten> {
  const { key, prompt, enhance, store } = input;
  // The prompt's record, reused; else (asked again) replaced, its calls kept.
  const latest = store ? await store.latest(prompt, enhance) : undefined;
  if (!input.again) {
    const found = latest ?? (await adoptedFromBefore(input));
    if (found) return { record: found, reused: true };
  }
  const answer = await input.ask({ model: enhance.model, maxTokens: enhance.maxTokens, system: enhance.system, prompt });
  // The key never goes into the store, even when a gateway echoes it.
  const text = redact(answer.text.trim());
  const usage = answer.usage ? { input_tokens: answer.usage.inputTokens, output_tokens: answer.usage.outputTokens } : undefined;
  const { payer } = input;
  const cost = payer?.priceOf(usage);
  const record = rewriteRecord({
    key,
    prompt,
    enhance,
    // An empty rewrite would render nothing useful: the item keeps its own prompt.
    rewrite: text.length > 0 ? text : null,
    model: answer.model,
    ...(usage ? { usage } : {}),
    ...(payer ? { paid: { by: payer.by, ...(cost ? { cost } : {}), ...(latest ? { replaces: latest } : {}) } } : {}),
  });
  try {
    await store?.put(record);
  } catch (error) {
    if (!input.onStoreFailed) throw error;
    input.onStoreFailed(error);
  }
  return { record, reused: false };
}

/**
 * How a call made now is priced from its answer's usage, at the enhance model's price: one function
 * for the render's enhance activity and `reelflow enhance` (jobfile/prices.ts rewriteCostUsd).
 */
export function rewritePricer(
  price: RewritePrice | undefined,
  enhance: EnhanceSettings,
  prompt: string,
): (usage: RewriteUsage | undefined) => RewriteCost | undefined {
  return (usage) =>
    rewriteCostUsd(price, enhance, prompt, usage ? { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens } : undefined);
}

/**
 * The item's own record from before records were kept per prompt text, made from this prompt: it
 * becomes the prompt's record (its calls stay counted where they are), so the item's other takes and
 * the items sharing its prompt reuse it instead of paying again. Not kept: it is still reused.
 */
async function adoptedFromBefore({ store, key, prompt, enhance }: RewriteInput): Promise<RewriteRecord | undefined> {
  if (!store || key === undefined) return undefined;
  const legacy = await store.find(prompt, enhance, key);
  if (!legacy) return undefined;
  const { key: _key, calls: _calls, ...rest } = legacy;
  await store.put({ ...rest, v: 2 }).catch(() => undefined);
  return legacy;
}
