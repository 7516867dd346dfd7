// `run --dry-run`: the exact create requests, key redacted, nothing sent.
import { describeGeneralCreateBody, GENERAL_CREATE_PATH, OPENAI_CREATE_PATH } from '../../gateway';
import type { Plan, PlanItem } from '../../jobfile/plan';
import type { Output } from '../output';
import { estimateLines, estimatePlan } from '../estimate';
import { readOutcome } from '../summary';

async function describeRequest(plan: Plan, item: PlanItem) {
  const base = plan.gateway.baseUrls[0];
  const headers = { authorization: `Bearer [REDACTED] (the key in $${plan.gateway.apiKeyEnv})` };
  if (item.request.protocol === 'general') {
    // Local references and long data: URLs are shortened (files are not read); the real body carries them whole.
    const body = await describeGeneralCreateBody(item.request);
    return { method: 'POST', url: `${base}${GENERAL_CREATE_PATH}`, headers: { ...headers, 'content-type': 'application/json' }, body };
  }
  const image = item.request.references.find((r) => r.kind === 'image');
  const form: Record<string, string> = { model: item.request.model, prompt: item.request.prompt };
  if (item.request.seconds) form.seconds = item.request.seconds;
  if (item.request.size) form.size = item.request.size;
  if (image) form.input_reference = `<file part: ${image.source.startsWith('data:') ? 'data: URL' : image.source}>`;
  return { method: 'POST', url: `${base}${OPENAI_CREATE_PATH}`, headers: { ...headers, 'content-type': 'multipart/form-data' }, form };
}

export async function printDryRun(plan: Plan, out: Output): Promise<void> {
  const requests = [];
  for (const item of plan.items)
    requests.push({ key: item.key, index: item.index, output: item.outputName, request: await describeRequest(plan, item) });
  if (out.json) {
    out.result({
      job: plan.job,
      dryRun: true,
      enhance: plan.enhance ?? null,
      items: requests,
      estimate: estimatePlan(plan),
      budget: plan.budget ? { max_usd: plan.budget.maxUsd } : null,
    });
    return;
  }
  // Items whose request changed since their last render (an unreachable output location: none shown).
  const changed = new Set((await readOutcome(plan).catch(() => undefined))?.changed);
  out.line(`${plan.job}: dry run, ${plan.items.length} create request(s); nothing is sent`);
  if (changed.size > 0)
    out.line(`${changed.size} item(s) changed since their last render: they are rendered again, the earlier files kept`);
  for (const line of estimateLines(estimatePlan(plan), plan.budget)) out.line(line);
  if (plan.enhance)
    out.line(
      `each prompt is first rewritten by ${plan.enhance.model} through POST ${plan.gateway.baseUrls[0]}/v1/messages ` +
        `(once per prompt text, then reused): see the rewrites first with \`reelflow enhance ${plan.jobFile}\``,
    );
  for (const r of requests) {
    out.line(`\n#${r.index} ${r.key} -> ${r.output}${changed.has(r.key) ? '  (changed since its last render)' : ''}`);
    out.line(`${r.request.method} ${r.request.url}`);
    for (const [name, value] of Object.entries(r.request.headers)) out.line(`${name}: ${value}`);
    out.line(JSON.stringify('body' in r.request ? r.request.body : r.request.form, null, 2));
  }
}
