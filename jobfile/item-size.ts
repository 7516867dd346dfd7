// How large one item of the plan may be, serialized: items travel through Temporal, whose server
// refuses any payload over 2 MB (TMPRL1103, the blob size limit) and any request over 4 MB (gRPC).
// An item is carried whole by: a page of the plan (one activity result, activities/plan.ts), the
// RenderWorkflow's start input (the item with the job's settings, sent in the job's startChild
// command), the create activity's input (its request), and the manifest row (its prompt). A page
// holds at most PLAN_PAGE_BYTES of items, and the starts of one page go out in one workflow task,
// so one task's commands stay near that size too. An item may take half a page: every page then
// holds at least two, and the largest single payload (a page) stays a quarter of Temporal's limit,
// leaving room for the settings and the envelope. Reasons and figures: docs/limits.md.
import type { PlanItem } from './plan';

/** Most serialized bytes one item may have (JSON, UTF-8): refused by `validate` beyond it. */
export const MAX_ITEM_BYTES = 256 * 1024;

/** Most serialized bytes of items in one page of the plan (one activity result). */
export const PLAN_PAGE_BYTES = 512 * 1024;

/** Temporal's default payload (blob) size limit, for messages. */
const TEMPORAL_PAYLOAD_LIMIT = '2 MB';

/** The size of a value as Temporal's JSON payload converter sends it: UTF-8 JSON. */
export function serializedBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

function kib(bytes: number): string {
  if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  return `${(bytes / 1024).toFixed(bytes % 1024 === 0 ? 0 : 1)} KiB`;
}

/**
 * Why an item is too large to run, and the key to point at (its prompt or its largest inline
 * reference, whichever is longer), or undefined when it fits.
 */
export function itemSizeProblem(item: PlanItem): { at: (string | number)[]; message: string } | undefined {
  const bytes = serializedBytes(item);
  if (bytes <= MAX_ITEM_BYTES) return undefined;
  const { prompt, references } = item.request;
  let at: (string | number)[] = ['prompt'];
  let largest = Buffer.byteLength(prompt, 'utf8');
  let advice = 'shorten the prompt';
  references.forEach((ref, j) => {
    if (ref.local || ref.source.length <= largest) return;
    largest = ref.source.length;
    at = ['references', j, ref.kind];
    advice = `reference the ${ref.kind} as a local file or an http(s) URL instead of a data: URL (those are read when the create is sent)`;
  });
  return {
    at,
    message:
      `this item is ${kib(bytes)} serialized, over the ${kib(MAX_ITEM_BYTES)} one item may have: items travel through ` +
      `Temporal, which refuses payloads over ${TEMPORAL_PAYLOAD_LIMIT}, in pages of at most ${kib(PLAN_PAGE_BYTES)}; ${advice}`,
  };
}
