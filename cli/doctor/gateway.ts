// Gateway checks of `reelflow doctor`. Every probe is cheap and read-only: a status check of a task
// id that cannot exist, GET /v1/models, and (only for jobs with `enhance:`) one Messages call with
// max_tokens 1. Nothing here ever creates a video task: every accepted create is a paid render.
import { randomBytes } from 'node:crypto';
import { isModelNotFound, parseErrorBody } from '../../gateway/classify';
import { normaliseBaseUrl } from '../../jobfile/values';
import type { EnhanceSettings } from '../../jobfile/plan';
import { type Check, fail, ok, warn } from './check';
import { explainNetwork, type Prober, type ProbeResult } from './http';

const MESSAGES_VERSION = '2023-06-01';

export interface KeyInfo {
  /** The environment variable's name (never the key). */
  env: string;
  key?: string;
}

export interface BaseProbe {
  base: string;
  check: Check;
  /** The base answered like a gateway: later probes may use it. */
  usable: boolean;
}

function modelAdvice(model: string): string {
  return (
    `model ${model} is not available to this key: check the model name against the catalog and that the key ` +
    'was created in the matching token group'
  );
}

function said(status: number, text: string): string {
  const body = parseErrorBody(text);
  return `HTTP ${status}${body.message ? `: ${body.message}` : ''}`;
}

function fingerprint(result: ProbeResult): string {
  if (result.kind === 'network') return 'no answer';
  const body = parseErrorBody(result.text);
  return `HTTP ${result.status} (${body.shape}${body.code ? ` ${body.code}` : ''})`;
}

function taskNotFound(text: string): boolean {
  const body = parseErrorBody(text);
  return body.code === 'task_not_exist' || /task[_ ]not[_ ](exist|found)/i.test(body.message ?? '');
}

/** What the job file's loader said about each normalised address, in the words of normaliseBaseUrl. */
export function normalisationNotes(warnings: readonly string[]): Map<string, string> {
  const notes = new Map<string, string>();
  for (const w of warnings) {
    const m = /base address "([^"]+)" normalised to "([^"]+)"/.exec(w);
    if (!m?.[1] || !m[2]) continue;
    const check = normaliseBaseUrl(m[1]);
    const removed = check.ok ? check.removed.join(' and ') : '';
    notes.set(m[2], `normalised from "${m[1]}"${removed ? ` (removed ${removed})` : ''}`);
  }
  return notes;
}

function describeAnswer(result: Extract<ProbeResult, { kind: 'answer' }>, key: KeyInfo): Check['status'] | 'refused-key' | 'foreign' {
  const { status, text } = result;
  if ((status === 400 || status === 404) && taskNotFound(text)) return 'ok';
  if (status === 401) return key.key ? 'refused-key' : 'ok';
  if (status === 403 || status === 429) return 'warn';
  if (status >= 500) return 'fail';
  return 'foreign';
}

/** One check per base address: reachable, latency, key accepted, and the same answers as the primary. */
export async function checkBases(prober: Prober, bases: readonly string[], key: KeyInfo, notes: Map<string, string>): Promise<BaseProbe[]> {
  const probeId = `reelflow-doctor-${randomBytes(6).toString('hex')}`;
  const headers: Record<string, string> = key.key ? { authorization: `Bearer ${key.key}` } : {};
  const results = await Promise.all(
    bases.map((base) => prober.send(`${base}/v1/video/generations/${probeId}`, { method: 'GET', headers })),
  );
  // Compare every base with the first one that answers at all: the same gateway gives the same answer.
  const referenceIndex = results.findIndex((r) => r.kind === 'answer');
  const reference = referenceIndex >= 0 ? fingerprint(results[referenceIndex]!) : '';
  const referenceName = referenceIndex === 0 ? 'the primary' : (bases[referenceIndex] ?? '');
  const healthy = (except: number) =>
    bases.filter((_, j) => {
      const r = results[j]!;
      return j !== except && r.kind === 'answer' && r.status < 500;
    });
  return bases.map((base, i) => {
    const result = results[i]!;
    const role = i === 0 ? 'primary' : `alternate ${i}`;
    const name = `gateway ${base} (${role})`;
    const note = notes.get(base) ? `${notes.get(base)}; ` : '';
    // A dead address with a healthy one beside it is a warning: runs fail over and still work.
    const others = healthy(i);
    const failOrWarn = others.length > 0 ? warn : fail;
    const fallback = others.length > 0 ? ` Runs would fail over to ${others.join(', ')}, paying a failed call and a cooldown first.` : '';
    if (result.kind === 'network') {
      return {
        base,
        usable: false,
        check: failOrWarn(
          name,
          `${note}unreachable after ${result.ms} ms: ${explainNetwork(result.code)}. Fix the address in gateway.base_urls or start the gateway.${fallback}`,
        ),
      };
    }
    const verdict = describeAnswer(result, key);
    const print = fingerprint(result);
    const same =
      i === referenceIndex
        ? ''
        : print === reference
          ? `; answers like ${referenceName}`
          : `; answers differently from ${referenceName} (${print} vs ${reference}): make sure it is an alternate address of the same gateway`;
    const keyWords = key.key ? 'key accepted' : `key not sent (${key.env} is not set)`;
    switch (verdict) {
      case 'ok': {
        const c = same.includes('differently') ? warn : ok;
        return { base, usable: true, check: c(name, `${note}reachable in ${result.ms} ms, ${keyWords}${same}`) };
      }
      case 'refused-key':
        return {
          base,
          usable: false,
          check: fail(
            name,
            `${note}reachable in ${result.ms} ms, but the key in ${key.env} was refused (${said(result.status, result.text)}): ` +
              `put a current key from the gateway's console into ${key.env}`,
            'usage',
          ),
        };
      case 'warn':
        return {
          base,
          usable: true,
          check: warn(
            name,
            `${note}reachable in ${result.ms} ms, but ${said(result.status, result.text)}` +
              (result.status === 429 ? ': the gateway is rate limiting this key right now' : ': the key may lack permission or quota'),
          ),
        };
      case 'fail':
        return {
          base,
          usable: false,
          check: failOrWarn(
            name,
            `${note}answers in ${result.ms} ms with ${said(result.status, result.text)}: ` +
              `the gateway, or the proxy in front of it, is in trouble.${fallback}`,
          ),
        };
      default:
        return {
          base,
          usable: false,
          check: fail(
            name,
            `${note}answers in ${result.ms} ms, but not like a video gateway ` +
              `(${said(result.status, result.text)}): the address must be the gateway's root; reelflow adds /v1/… itself`,
          ),
        };
    }
  });
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
