// One item's prompt rewrite, paid for once (docs/enhance.md): the stored record is reused while the
// prompt and the enhance settings are the ones it was made from; otherwise Messages is asked once
// and the answer stored before it is returned. Shared by the render's enhance activity and
// `reelflow enhance`, so both find and leave the same records. No Temporal here.
import { redact, type MessageResult } from '../gateway';
import type { EnhanceSettings } from '../jobfile/plan';
import { rewriteRecord, type RewriteRecord, type RewriteStore } from '../storage/rewrites';

export interface RewriteInput {
  key: string;
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
}

export interface Rewritten {
  record: RewriteRecord;
  /** Found in the store: no Messages call was made. */
  reused: boolean;
}

export async function rewriteOnce(input: RewriteInput): Promise<Rewritten> {
  const { key, prompt, enhance, store } = input;
  if (store && !input.again) {
    const found = await store.find(key, prompt, enhance);
    if (found) return { record: found, reused: true };
  }
  const answer = await input.ask({ model: enhance.model, maxTokens: enhance.maxTokens, system: enhance.system, prompt });
  // The key never goes into the store, even when a gateway echoes it.
  const text = redact(answer.text.trim());
  const record = rewriteRecord({
    key,
    prompt,
    enhance,
    // An empty rewrite would render nothing useful: the item keeps its own prompt.
    rewrite: text.length > 0 ? text : null,
    model: answer.model,
    ...(answer.usage ? { usage: { input_tokens: answer.usage.inputTokens, output_tokens: answer.usage.outputTokens } } : {}),
  });
  try {
    await store?.put(record);
  } catch (error) {
    if (!input.onStoreFailed) throw error;
    input.onStoreFailed(error);
  }
  return { record, reused: false };
}
