// `run --dry-run`: the create requests, key redacted, nothing sent. Each is built by the gateway
// client's own code (gateway/index.ts), so what is shown is what would be sent. A large job shows
// the first request of each model and protocol and ends with a count of each; `--full` (or
// `--json`) shows every request (docs/commands.md).
import { describeGeneralCreateBody, GENERAL_CREATE_PATH, OPENAI_CREATE_PATH, openaiCreateFields } from '../../gateway';
import type { Plan, PlanItem } from '../../jobfile/plan';
import type { Output } from '../output';
import { addGatewayPrices, estimateLines, estimatePlan, gatewayPricesLines } from '../../client/estimate';
import { itemsToSend, readOutcome } from '../../client/summary';
import { openStorage } from '../../storage';
import type { ItemEndState } from '../../storage/manifest';

/** Up to this many items, every request is shown without `--full`. */
const SHOWN_WHOLE = 5;

async function describeRequest(plan: Plan, item: PlanItem) {
  const base = plan.gateway.baseUrls[0];
  const headers = { authorization: `Bearer [REDACTED] (the key in $${plan.gateway.apiKeyEnv})` };
  if (item.request.protocol === 'general') {
    // Local references and long data: URLs are shortened (files are not read); the real body carries them whole.
    const body = await describeGeneralCreateBody(item.request);
    return { method: 'POST', url: `${base}${GENERAL_CREATE_PATH}`, headers: { ...headers, 'content-type': 'application/json' }, body };
  }
  const form: Record<string, string> = Object.fromEntries(openaiCreateFields(item.request));
  const image = item.request.references.find((r) => r.kind === 'image');
  if (image) form.input_reference = `<file part: ${image.source.startsWith('data:') ? 'data: URL' : image.source}>`;
  return { method: 'POST', url: `${base}${OPENAI_CREATE_PATH}`, headers: { ...headers, 'content-type': 'multipart/form-data' }, form };
}

/** Items per model and protocol, in the order each first appears, with the address each goes to. */
function requestGroups(plan: Plan) {
  const groups = new Map<string, { model: string; protocol: string; items: number; first: PlanItem; url: string }>();
  for (const item of plan.items) {
    const { model, protocol } = item.request;
    const id = `${model}\u0000${protocol}`;
    const group = groups.get(id);
    if (group) group.items++;
    else {
      const path = protocol === 'general' ? GENERAL_CREATE_PATH : OPENAI_CREATE_PATH;
      groups.set(id, { model, protocol, items: 1, first: item, url: `${plan.gateway.baseUrls[0]}${path}` });
    }
  }
  return [...groups.values()];
}

/**
 * What a run would send now: the items it would not skip as already ended (summary.ts itemsToSend),
 * and how many it skips. An output location that cannot be read: every item, as if none had ended.
 */
async function toSend(plan: Plan, retryStates: readonly ItemEndState[]): Promise<{ items: PlanItem[]; changed: Set<string> }> {
  try {
    const outcome = await readOutcome(plan);
    const stored = new Map((await openStorage(plan.output).list()).map((o) => [o.name, o]));
    return { items: itemsToSend(plan, outcome, stored, retryStates), changed: new Set(outcome.changed) };
  } catch {
    return { items: plan.items, changed: new Set() };
  }
}

export async function printDryRun(
  whole: Plan,
  out: Output,
  options: { full?: boolean; pricesKey?: string; retryStates?: readonly ItemEndState[] } = {},
): Promise<void> {
  // The gateway's published prices beneath the job's (docs/costs.md): a bounded read, never a create.
  const { note } = await addGatewayPrices(whole, options.pricesKey);
  // After an edit or a stop, only what is left is sent and priced: quoting the whole job read as its cost.
  const { items, changed } = await toSend(whole, options.retryStates ?? []);
  const plan = { ...whole, items };
  const ended = whole.items.length - items.length;
  const groups = requestGroups(plan);
  if (out.json) {
    const requests = [];
    for (const item of plan.items)
      requests.push({ key: item.key, index: item.index, output: item.outputName, request: await describeRequest(plan, item) });
    out.result({
      job: plan.job,
      dryRun: true,
      enhance: plan.enhance ?? null,
      items: requests,
      summary: groups.map((g) => ({ model: g.model, protocol: g.protocol, items: g.items, method: 'POST', url: g.url })),
      estimate: estimatePlan(plan),
      gateway_prices: note,
      budget: plan.budget ? { max_usd: plan.budget.maxUsd } : null,
    });
    return;
  }
  const skipped = ended > 0 ? ` (${ended} of the job's ${whole.items.length} item(s) already ended: not sent again)` : '';
  out.line(`${plan.job}: dry run, ${plan.items.length} create request(s)${skipped}; nothing is sent`);
  if (changed.size > 0)
    out.line(`${changed.size} item(s) changed since their last render: they are rendered again, the earlier files kept`);
  for (const line of [...estimateLines(estimatePlan(plan), plan.budget), ...gatewayPricesLines(note)]) out.line(line);
  if (plan.enhance)
    out.line(
      `each prompt is first rewritten by ${plan.enhance.model} through POST ${plan.gateway.baseUrls[0]}/v1/messages ` +
        `(once per prompt text, then reused): see the rewrites first with \`reelflow enhance ${plan.jobFile}\``,
    );
  const every = options.full === true || plan.items.length <= SHOWN_WHOLE;
  const shown = every ? plan.items : groups.map((g) => g.first);
  for (const item of shown) {
    const request = await describeRequest(plan, item);
    out.line(`\n#${item.index} ${item.key} -> ${item.outputName}${changed.has(item.key) ? '  (changed since its last render)' : ''}`);
    out.line(`${request.method} ${request.url}`);
    for (const [name, value] of Object.entries(request.headers)) out.line(`${name}: ${value}`);
    out.line(JSON.stringify('body' in request ? request.body : request.form, null, 2));
  }
  const width = (pick: (g: (typeof groups)[number]) => string) => Math.max(...groups.map((g) => pick(g).length));
  const [modelWidth, protocolWidth, countWidth] = [width((g) => g.model), width((g) => g.protocol), width((g) => String(g.items))];
  out.line(`\n${plan.items.length} create request(s), by model and protocol:`);
  for (const g of groups) {
    out.line(
      `  ${g.model.padEnd(modelWidth)}  ${g.protocol.padEnd(protocolWidth)}  ${String(g.items).padStart(countWidth)}  POST ${g.url}`,
    );
  }
  if (!every) out.line('shown: the first request of each; every request: reelflow run --dry-run --full (or --json)');
}
