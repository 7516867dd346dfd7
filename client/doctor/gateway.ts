// The base address checks of `reelflow doctor`: per address, one request per protocol that cannot
// create anything (routes.ts), read together into one line: reachable, key accepted, which
// protocols it serves, the same answers as the primary. Nothing here ever creates a video task:
// every accepted create is a paid render.
import { randomBytes } from 'node:crypto';
import { parseErrorBody } from '../../gateway';
import { normaliseBaseUrl } from '../../jobfile/values';
import type { Plan, Protocol } from '../../jobfile/plan';
import { type Check, fail, ok, warn } from './check';
import { explainNetwork, type Prober, type ProbeResult } from './http';
import { litellmVersion } from './litellm';
import { readRoute, ROUTE_ORDER, routeRequest, type RouteName, type RouteReading } from './routes';

export interface KeyInfo {
  /** The environment variable's name (never the key). */
  env: string;
  key?: string;
}

/** What the job asks of its gateway. */
export interface GatewayNeeds {
  /** Each video protocol the job's items use, with those items' models and how many items. */
  video: ReadonlyMap<Protocol, { items: number; models: string[] }>;
  /** The job enhances prompts through Messages. */
  messages: boolean;
}

export function gatewayNeeds(plan: Pick<Plan, 'items' | 'enhance'>): GatewayNeeds {
  const video = new Map<Protocol, { items: number; models: string[] }>();
  for (const { request } of plan.items) {
    const use = video.get(request.protocol) ?? { items: 0, models: [] };
    use.items += 1;
    if (!use.models.includes(request.model)) use.models.push(request.model);
    video.set(request.protocol, use);
  }
  return { video, messages: plan.enhance !== undefined };
}

export interface BaseProbe {
  base: string;
  check: Check;
  /** The key was not refused and the base serves a protocol: later probes (models) may use it. */
  usable: boolean;
  /** It serves /v1/messages: the enhance check may use it. */
  servesMessages: boolean;
  /** Its answers came from a LiteLLM proxy: the version ('' when unknown). */
  litellm?: string;
}

function fingerprint(result: ProbeResult): string {
  if (result.kind === 'network') return 'no answer';
  const body = parseErrorBody(result.text);
  return `HTTP ${result.status} (${body.shape}${body.code ? ` ${body.code}` : ''})`;
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

/** Every route probe of one base address, answered or not. */
interface BaseAnswers {
  base: string;
  results: Map<RouteName, ProbeResult>;
  labels: Map<RouteName, string>;
  readings: Map<RouteName, RouteReading>;
  /** The fastest answer, ms; undefined when nothing answered. */
  ms?: number;
  litellm?: string;
}

/** Each route the job needs: the video protocols of its items, and Messages when it enhances. */
function neededRoutes(needs: GatewayNeeds): RouteName[] {
  return ROUTE_ORDER.filter((r) => (r === 'messages' ? needs.messages : needs.video.has(r)));
}

async function probeBase(prober: Prober, base: string, routes: readonly RouteName[], probeId: string): Promise<BaseAnswers> {
  const requests = routes.map((route) => ({ route, request: routeRequest(route, base, probeId) }));
  const sent = await Promise.all(requests.map(({ request }) => prober.send(request)));
  const answers: BaseAnswers = { base, results: new Map(), labels: new Map(), readings: new Map() };
  requests.forEach(({ route, request }, i) => {
    const result = sent[i]!;
    answers.results.set(route, result);
    answers.labels.set(route, request.label);
    if (result.kind === 'network') {
      answers.readings.set(route, { verdict: 'trouble', said: `no answer (${explainNetwork(result.code)})` });
      return;
    }
    answers.readings.set(route, readRoute(route, result, result.keySent));
    answers.ms = Math.min(answers.ms ?? Infinity, result.ms);
    answers.litellm ??= litellmVersion(result);
  });
  return answers;
}

const MARK: Record<RouteReading['verdict'], string> = {
  serves: '✓',
  limited: '✓',
  missing: '✗',
  foreign: '✗',
  'key-refused': '?',
  trouble: '?',
};

/** `general ✗ (not used by this job), openai ✓, messages ✓` */
function protocolMarks(answers: BaseAnswers, needs: GatewayNeeds): string {
  return [...answers.readings]
    .map(([route, reading]) => {
      const mark = MARK[reading.verdict];
      const unused = route !== 'messages' && !needs.video.has(route) && mark !== '✓' ? ' (not used by this job)' : '';
      return `${route} ${mark}${unused}`;
    })
    .join(', ');
}

type Assessment =
  | { kind: 'unreachable'; code: string; ms: number }
  | { kind: 'key-refused'; said: string }
  | { kind: 'not-a-gateway' }
  | { kind: 'trouble'; route: RouteName; said: string }
  | { kind: 'missing'; routes: RouteName[] }
  | { kind: 'limited'; status: number; said: string }
  | { kind: 'ok' };

function assess(answers: BaseAnswers, needs: GatewayNeeds): Assessment {
  const results = [...answers.results.values()];
  if (results.every((r) => r.kind === 'network')) {
    const first = results[0];
    return { kind: 'unreachable', code: first?.kind === 'network' ? first.code : 'ERROR', ms: first?.ms ?? 0 };
  }
  const readings = [...answers.readings];
  const refused = readings.find(([, r]) => r.verdict === 'key-refused');
  if (refused) return { kind: 'key-refused', said: refused[1].said };
  const needed = neededRoutes(needs);
  const trouble = needed.find((r) => answers.readings.get(r)?.verdict === 'trouble');
  const isGateway = readings.some(([, r]) => r.verdict === 'serves' || r.verdict === 'limited');
  if (!isGateway) {
    return trouble ? { kind: 'trouble', route: trouble, said: answers.readings.get(trouble)!.said } : { kind: 'not-a-gateway' };
  }
  const missing = needed.filter((r) => ['missing', 'foreign'].includes(answers.readings.get(r)?.verdict ?? ''));
  if (missing.length > 0) return { kind: 'missing', routes: missing };
  if (trouble) return { kind: 'trouble', route: trouble, said: answers.readings.get(trouble)!.said };
  const limited = needed.find((r) => answers.readings.get(r)?.verdict === 'limited');
  if (limited) {
    const result = answers.results.get(limited)!;
    return { kind: 'limited', status: result.kind === 'answer' ? result.status : 0, said: answers.readings.get(limited)!.said };
  }
  return { kind: 'ok' };
}

/** Why one needed route missing at `base` stops a run, and what to change. */
function missingRoute(answers: BaseAnswers, route: RouteName, needs: GatewayNeeds): string {
  const heard = `${answers.labels.get(route)} answered ${answers.readings.get(route)!.said}`;
  if (route === 'messages') {
    return (
      `${answers.base} does not serve Messages (${heard}), which the job's enhance: block uses: ` +
      'remove enhance:, or use a gateway address that serves /v1/messages'
    );
  }
  const use = needs.video.get(route)!;
  const other: Protocol = route === 'general' ? 'openai' : 'general';
  const otherServed = ['serves', 'limited'].includes(answers.readings.get(other)?.verdict ?? '');
  const items = `${use.items} item${use.items === 1 ? '' : 's'}`;
  return (
    `${answers.base} does not serve the ${route} protocol (${heard}), which ${items} of this job use${use.items === 1 ? 's' : ''} ` +
    `(model${use.models.length === 1 ? '' : 's'} ${use.models.join(', ')}): ` +
    (otherServed
      ? `give ${use.models.length === 1 ? 'that model' : 'those models'} protocol: ${other} (models.<model>.protocol) if the gateway offers ` +
        `${use.models.length === 1 ? 'it' : 'them'} there, or list an address that serves ${route} in gateway.base_urls`
      : `list an address that serves ${route} in gateway.base_urls`)
  );
}

/**
 * One check per base address: reachable, latency, key accepted, which protocols it serves (each one
 * the job needs must be), and the same answers as the primary.
 */
export async function checkBases(
  prober: Prober,
  bases: readonly string[],
  key: KeyInfo,
  notes: Map<string, string>,
  needs: GatewayNeeds,
): Promise<BaseProbe[]> {
  const probeId = `reelflow-doctor-${randomBytes(6).toString('hex')}`;
  // Both video protocols always (which ones an address serves is worth knowing); Messages only for a job that enhances.
  const routes = ROUTE_ORDER.filter((r) => r !== 'messages' || needs.messages);
  const all = await Promise.all(bases.map((base) => probeBase(prober, base, routes, probeId)));
  const assessments = all.map((answers) => assess(answers, needs));
  // Compare every base with the first one that answers at all: the same gateway gives the same answers.
  const prints = all.map((answers) => routes.map((r) => `${r} ${fingerprint(answers.results.get(r)!)}`).join(', '));
  const referenceIndex = all.findIndex((answers) => answers.ms !== undefined);
  const referenceName = referenceIndex === 0 ? 'the primary' : (bases[referenceIndex] ?? '');
  const healthy = (except: number) => bases.filter((_, j) => j !== except && ['ok', 'limited'].includes(assessments[j]!.kind));
  return all.map((answers, i) => {
    const { base } = answers;
    const assessment = assessments[i]!;
    const role = i === 0 ? 'primary' : `alternate ${i}`;
    const name = `gateway ${base} (${role})`;
    const note = notes.get(base) ? `${notes.get(base)}; ` : '';
    // A dead address with a healthy one beside it is a warning: runs fail over and still work.
    const others = healthy(i);
    const failOrWarn = others.length > 0 ? warn : fail;
    const fallback = others.length > 0 ? ` Runs would fail over to ${others.join(', ')}, paying a failed call and a cooldown first.` : '';
    const ms = answers.ms ?? 0;
    const marks = protocolMarks(answers, needs);
    const keySent = [...answers.results.values()].some((r) => r.kind === 'answer' && r.keySent);
    const keyWords = keySent
      ? 'key accepted'
      : `key not sent (${key.key ? `the key rule does not allow ${key.env} here` : `${key.env} is not set`})`;
    const servesAny = [...answers.readings.values()].some((r) => r.verdict === 'serves' || r.verdict === 'limited');
    const messages = answers.readings.get('messages');
    const probe = (check: Check, usable = servesAny): BaseProbe => ({
      base,
      check,
      usable,
      servesMessages: usable && (messages?.verdict === 'serves' || messages?.verdict === 'limited'),
      ...(answers.litellm !== undefined ? { litellm: answers.litellm } : {}),
    });
    switch (assessment.kind) {
      case 'unreachable':
        return probe(
          failOrWarn(
            name,
            `${note}unreachable after ${assessment.ms} ms: ${explainNetwork(assessment.code)}. ` +
              `Fix the address in gateway.base_urls or start the gateway.${fallback}`,
          ),
          false,
        );
      case 'key-refused':
        return probe(
          fail(
            name,
            `${note}reachable in ${ms} ms, but the key in ${key.env} was refused (${assessment.said}): ` +
              `put a current key from the gateway's console into ${key.env}`,
            'usage',
          ),
          false,
        );
      case 'not-a-gateway': {
        const heard = routes.map((r) => `${answers.labels.get(r)}: ${answers.readings.get(r)!.said}`).join('; ');
        return probe(
          fail(
            name,
            `${note}answers in ${ms} ms, but not like a video gateway (${heard}): ` +
              "the address must be the gateway's root; reelflow adds /v1/… itself",
          ),
          false,
        );
      }
      case 'trouble':
        return probe(
          failOrWarn(
            name,
            `${note}answers in ${ms} ms with ${assessment.said} on ${answers.labels.get(assessment.route)}: ` +
              `the gateway, or the proxy in front of it, is in trouble${keySent ? '' : ` (no key was sent: ${key.key ? 'the key rule does not allow it here' : `${key.env} is not set`})`}; ` +
              `${marks}.${fallback}`,
          ),
        );
      case 'missing':
        return probe(
          fail(
            name,
            `${note}reachable in ${ms} ms, ${keyWords}; ${marks}. ` +
              assessment.routes.map((r) => missingRoute(answers, r, needs)).join('. '),
            'usage',
          ),
        );
      case 'limited':
        return probe(
          warn(
            name,
            `${note}reachable in ${ms} ms, but ${assessment.said}` +
              (assessment.status === 429 ? ': the gateway is rate limiting this key right now' : ': the key may lack permission or quota') +
              `; ${marks}`,
          ),
        );
      case 'ok': {
        const same =
          i === referenceIndex
            ? ''
            : prints[i] === prints[referenceIndex]
              ? `; answers like ${referenceName}`
              : `; answers differently from ${referenceName} (${prints[i]} vs ${prints[referenceIndex]}): ` +
                'make sure it is an alternate address of the same gateway';
        const c = same.includes('differently') ? warn : ok;
        return probe(c(name, `${note}reachable in ${ms} ms, ${keyWords}; ${marks}${same}`));
      }
    }
  });
}
