// Which of reelflow's protocols a gateway address serves, read from one request per protocol that
// cannot create or cost anything: the status check of a task id that cannot exist (both video
// protocols), and a Messages request without a model (nothing is generated). This file builds the
// requests and reads the answers; it sends nothing itself.
import {
  AuthError,
  classifyGatewayError,
  isModelNotFound,
  isTaskNotFound,
  parseErrorBody,
  PROBE_HEADERS,
  recogniseGateway,
} from '../../gateway';
import type { Protocol } from '../../jobfile/plan';
import type { ProbeAnswer, ProbeRequest } from './http';

export type RouteName = Protocol | 'messages';

/** The order in which a base address's protocols are listed. */
export const ROUTE_ORDER: readonly RouteName[] = ['general', 'openai', 'messages'];

export const MESSAGES_VERSION = '2023-06-01';

export interface RouteRequest extends ProbeRequest {
  /** How the route reads in messages: `GET /v1/videos/{id}`. */
  label: string;
}

/**
 * The probe of one route on one base address. It names the header the key would go in; the route
 * of the probe (gateway/exchange.ts) decides whether it goes. A status check carries the headers
 * that keep every known gateway answering it itself (gateway/dialects: LiteLLM would otherwise ask
 * its default provider, OpenAI's public address, about an id it cannot decode).
 */
export function routeRequest(route: RouteName, base: string, probeId: string): RouteRequest {
  if (route === 'messages') {
    return {
      label: 'POST /v1/messages',
      url: `${base}/v1/messages`,
      method: 'POST',
      credential: 'x-api-key',
      headers: { 'anthropic-version': MESSAGES_VERSION, 'content-type': 'application/json' },
      body: '{}',
    };
  }
  const path = route === 'general' ? '/v1/video/generations' : '/v1/videos';
  return {
    label: `GET ${path}/{id}`,
    url: `${base}${path}/${probeId}`,
    method: 'GET',
    credential: 'bearer',
    headers: { ...PROBE_HEADERS },
  };
}

/**
 * - `serves`: the route exists (it answered the impossible task as not found, refused the empty
 *   Messages request, or asked for a key we did not send);
 * - `limited`: it exists, but refuses this key the resource (403) or is rate limiting it (429);
 * - `missing`: a 404 (or 405, 501) on the route itself: this address does not serve the protocol;
 * - `key-refused`: the key was sent and refused;
 * - `trouble`: a server error that says nothing about the route;
 * - `foreign`: an answer no gateway route gives (a web page, a redirect).
 */
export type RouteVerdict = 'serves' | 'limited' | 'missing' | 'key-refused' | 'trouble' | 'foreign';

export interface RouteReading {
  verdict: RouteVerdict;
  /** What the gateway said, for messages: `HTTP 404: Not Found`. */
  said: string;
}

/** `HTTP 404: Not Found`: the status and the gateway's own message, redacted and bounded. */
export function said(status: number, text: string): string {
  const body = parseErrorBody(text);
  return `HTTP ${status}${body.message ? `: ${body.message}` : ''}`;
}

const isJson = (text: string): boolean => ['task', 'openai', 'anthropic'].includes(parseErrorBody(text).shape);

/** What one route's answer says about the route. `keySent`: whether the probe carried the key. */
export function readRoute(route: RouteName, answer: Pick<ProbeAnswer, 'status' | 'text' | 'headers'>, keySent: boolean): RouteReading {
  const { status, text } = answer;
  const reading = (verdict: RouteVerdict): RouteReading => ({ verdict, said: said(status, text) });
  // The key check comes after the route match in every gateway seen (FastAPI, gin, the simulator).
  if (classifyGatewayError({ status, body: text, operation: route === 'messages' ? 'message' : 'retrieve' }) instanceof AuthError) {
    return reading(keySent ? 'key-refused' : 'serves');
  }
  if (status === 403 || status === 429) return reading('limited');
  const body = parseErrorBody(text);
  if (status === 404) {
    // The task id that cannot exist was not found: the status check route exists.
    const exists = route === 'messages' ? isModelNotFound(body) : isTaskNotFound(body);
    return reading(exists ? 'serves' : 'missing');
  }
  if (status === 405 || status === 501) return reading('missing');
  if (status >= 500) {
    // A gateway that says it is one (LiteLLM's x-litellm-* headers) answered from inside the route's handler: the route exists.
    if (recogniseGateway(answer) !== undefined) return reading('serves');
    if (route === 'messages' && isModelNotFound(body)) return reading('serves');
    return reading('trouble');
  }
  // A 2xx or a 4xx in a gateway's JSON: the route read the request. A page or a redirect: not a gateway route.
  const answered = (status >= 200 && status < 300) || (status >= 400 && status < 500);
  return reading(answered && isJson(text) ? 'serves' : 'foreign');
}
