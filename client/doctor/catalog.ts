// What the key may use: the enhance model through one Messages call with max_tokens 1, and every
// model of the job against GET /v1/models (the run's preflight, gateway/catalog.ts). Neither
// creates a video task.
import { isModelNotFound, judgeCatalog, modelUses, parseErrorBody, readCatalogs, type KeyUse } from '../../gateway';
import type { EnhanceSettings, Plan } from '../../jobfile/plan';
import { type Check, fail, ok, warn } from './check';
import { explainNetwork, type Prober } from './http';
import { MESSAGES_VERSION, said } from './routes';

function modelAdvice(model: string): string {
  return (
    `model ${model} is not available to this key: check the model name against the catalog and that the key ` +
    'was created in the matching token group'
  );
}

/** POST /v1/messages with max_tokens 1: the key, the version header and the enhance model in one cheap call. */
export async function checkMessages(prober: Prober, base: string, enhance: EnhanceSettings): Promise<Check> {
  const name = 'messages';
  const result = await prober.send({
    url: `${base}/v1/messages`,
    method: 'POST',
    credential: 'x-api-key',
    headers: { 'anthropic-version': MESSAGES_VERSION, 'content-type': 'application/json' },
    body: JSON.stringify({ model: enhance.model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] }),
  });
  if (result.kind === 'network') return fail(name, `${base}/v1/messages: ${explainNetwork(result.code)}`);
  const { status, text, ms } = result;
  const body = parseErrorBody(text);
  if (status >= 200 && status < 300) {
    return ok(name, `${base}/v1/messages accepts the key and anthropic-version ${MESSAGES_VERSION}; ${enhance.model} answered in ${ms} ms`);
  }
  if (status === 404 || (status === 503 && isModelNotFound(body))) {
    return fail(name, `${said(status, text)}: ${modelAdvice(enhance.model)} (enhance.model)`, 'usage');
  }
  if (status === 401) {
    return fail(
      name,
      `the key was refused on /v1/messages (${said(status, text)}): for Messages models the key must be ` +
        'created in the matching token group, not the default group',
      'usage',
    );
  }
  if (status === 403)
    return fail(name, `${said(status, text)}: the key's token group may not allow ${enhance.model}, or its quota is used up`, 'usage');
  if (status === 400) {
    return fail(
      name,
      `${said(status, text)}: the gateway refused a minimal request with anthropic-version ${MESSAGES_VERSION}; ` +
        `check that enhance.model (${enhance.model}) is a Messages model`,
      'usage',
    );
  }
  if (status === 429) return warn(name, `${said(status, text)}: rate limited right now; the key and header were not refused`);
  return fail(name, `${said(status, text)}: the Messages endpoint is in trouble; enhance would fail`);
}

/**
 * The job's models against the key's catalog: the run's own preflight (gateway/catalog.ts), in the
 * same words. GET /v1/models lists the models of the key's token group on gateways that publish
 * one; where none is published, the only other way is a create, which would start a paid render.
 */
export async function checkModels(plan: Pick<Plan, 'gateway' | 'items' | 'enhance' | 'modelSites'>, use: KeyUse): Promise<Check[]> {
  const report = await readCatalogs(plan.gateway.baseUrls, use);
  const uses = modelUses(plan);
  const verdict = judgeCatalog(report, uses, plan.gateway.apiKeyEnv);
  if (verdict.exit === 3) return verdict.problems.map((p) => fail('models', `a run would stop: ${p.message}`));
  if (verdict.exit === 2 && !report.catalog) return verdict.problems.map((p) => fail('models', p.message, 'usage'));
  const { catalog } = report;
  if (!catalog) return [warn('models', `${verdict.checked}: a wrong name shows as "not available to this key" on the first create`)];
  return uses.map((use) => {
    const name = `${use.role === 'enhance' ? 'enhance ' : ''}model ${use.model}`;
    const problem = verdict.problems.find((p) => p.about === name);
    return problem
      ? fail(name, problem.message, 'usage')
      : ok(name, `in the catalog of ${catalog.base} (${catalog.models.size} models listed for this key)`);
  });
}
