// What the key may use, checked on one base address that answered like the gateway: the enhance
// model through one Messages call with max_tokens 1, and the video models against GET /v1/models.
// Neither creates a video task.
import { isModelNotFound, parseErrorBody } from '../../gateway/classify';
import type { EnhanceSettings } from '../../jobfile/plan';
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
export async function checkMessages(prober: Prober, base: string, key: string, enhance: EnhanceSettings): Promise<Check> {
  const name = 'messages';
  const result = await prober.send(`${base}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'anthropic-version': MESSAGES_VERSION, 'content-type': 'application/json' },
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
 * The video models against the key's catalog. GET /v1/models lists the models of the key's token group on
 * gateways that offer it; where it does not, the only other way is a create, which would start a paid render.
 */
export async function checkModels(prober: Prober, base: string, key: string, models: readonly string[]): Promise<Check[]> {
  const result = await prober.send(`${base}/v1/models`, { method: 'GET', headers: { authorization: `Bearer ${key}` } });
  const listed = result.kind === 'answer' && result.status === 200 ? modelIds(result.text) : undefined;
  if (!listed) {
    const why = result.kind === 'network' ? explainNetwork(result.code) : `GET /v1/models answered ${said(result.status, result.text)}`;
    return [
      warn(
        'models',
        `cannot verify ${models.join(', ')} without creating a task (${why}). A wrong name or token ` +
          'group shows as "not available to this key" on the first item',
      ),
    ];
  }
  return models.map((m) =>
    listed.has(m)
      ? ok(`model ${m}`, 'listed for this key')
      : fail(`model ${m}`, `not in the key's catalog (${listed.size} models listed): ${modelAdvice(m)}`, 'usage'),
  );
}

function modelIds(text: string): Set<string> | undefined {
  try {
    const body = JSON.parse(text) as { data?: unknown };
    if (!Array.isArray(body.data)) return undefined;
    const ids = body.data.map((m) => (m as { id?: unknown }).id).filter((id): id is string => typeof id === 'string');
    return ids.length > 0 ? new Set(ids) : undefined;
  } catch {
    return undefined;
  }
}
