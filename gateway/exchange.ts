// One request to a gateway, and the one place that decides whether the key goes with it. Every
// request reelflow makes to a gateway passes here: each attempt of the retry engine (retry.ts:
// creates, status checks, Messages, downloads), and the single free reads made before anything is
// paid for (the catalog, the published prices, the doctor's probes: `sendOnce`). The key goes only
// to an origin of the route's `authOrigins` (the configured base addresses the user's key rule
// allows: gateway/key-route.ts), only to one of the protocol's endpoints, and never on a followed
// redirect; every connection to a loopback origin it goes to unasked is checked again once made
// (the transport's connector, gateway/http.ts).
import type { GatewayOperation } from './classify';
import { DownloadError, InvalidRequestError, type GatewayError } from './errors';
import { discard, header, sourceOf, type HttpResponse, type HttpTransport, type RequestBody } from './http';
import { privateTargetProblem } from './outbound';

/** The header that carries the key. */
export type Credential = 'bearer' | 'x-api-key' | 'none';

/** What the requests to one gateway share: the transport and where the key may go. */
export interface KeyRoute {
  transport: HttpTransport;
  /** Absent: no request carries a key. */
  apiKey?: string;
  /** The origins the key may be sent to: the configured base addresses the key rule allows. */
  authOrigins: ReadonlySet<string>;
  /** Whether addresses other than `authOrigins` may be private, loopback or link-local (gateway/outbound.ts). */
  allowPrivateTargets: boolean;
}

export interface PreparedBody {
  body: RequestBody;
  headers?: Record<string, string>;
  dispose?: () => void;
}

/** Where an answer came from: the base the attempt was made for, and the address after redirects. */
export interface Answered {
  baseUrl: string;
  url: URL;
}

/** What one exchange needs of its call. */
export interface ExchangeSpec {
  operation: GatewayOperation;
  method: 'GET' | 'POST';
  credential: Credential;
  /** Headers other than the key's, asked before every request. */
  headers?: () => Record<string, string>;
  followRedirects?: boolean;
  signal?: AbortSignal;
}

const MAX_REDIRECTS = 5;

/** The key's header for a request to `url`: the one decision of where the key goes. */
export function keyHeaders(route: KeyRoute, kind: Credential, url: URL): Record<string, string> {
  if (kind === 'none' || !route.apiKey || !route.authOrigins.has(url.origin)) return {};
  return kind === 'bearer' ? { authorization: `Bearer ${route.apiKey}` } : { 'x-api-key': route.apiKey };
}

/**
 * One request and, for calls that follow them, its redirects. The key goes with the first request
 * only, and only when it is to one of the protocol's endpoints (`toEndpoint`: a path on a configured
 * base): never to an address a gateway handed out (result_url), never on a followed redirect, even
 * one back to the gateway's own origin, which could name any path there.
 */
export async function exchange(
  route: KeyRoute,
  spec: ExchangeSpec,
  start: Answered,
  body: PreparedBody | undefined,
  toEndpoint: boolean,
): Promise<{ response: HttpResponse; at: Answered; keySent: boolean }> {
  let at = start;
  for (let hop = 0; ; hop += 1) {
    if (!route.allowPrivateTargets && !route.authOrigins.has(at.url.origin)) {
      const problem = await privateTargetProblem(at.url);
      if (problem) throw unusable(spec.operation, problem);
    }
    const key = hop === 0 && toEndpoint ? keyHeaders(route, spec.credential, at.url) : {};
    const keySent = Object.keys(key).length > 0;
    const headers = { ...spec.headers?.(), ...body?.headers, ...key };
    const response = await route.transport.send(
      { url: at.url, method: spec.method, headers, body: body?.body ?? null, signal: spec.signal },
      servedBy(route, at),
    );
    const location = header(response.headers, 'location');
    const redirected = response.status >= 300 && response.status < 400 && response.status !== 304;
    if (!spec.followRedirects || !redirected || !location) return { response, at, keySent };
    discard(response.body);
    if (hop >= MAX_REDIRECTS) throw unusable(spec.operation, `too many redirects (the last to ${sourceOf(at.url)})`);
    at = { baseUrl: at.baseUrl, url: redirectTarget(location, at.url, spec.operation) };
  }
}

/** One request to one of a gateway's endpoints, no redirect followed: the free reads and the doctor's probes. */
export async function sendOnce(
  route: KeyRoute,
  url: URL,
  spec: Omit<ExchangeSpec, 'followRedirects'> & { body?: string },
): Promise<{ response: HttpResponse; keySent: boolean }> {
  const body = spec.body === undefined ? undefined : { body: spec.body };
  const { response, keySent } = await exchange(route, spec, { baseUrl: url.origin, url }, body, true);
  return { response, keySent };
}

function redirectTarget(location: string, from: URL, operation: GatewayOperation): URL {
  let next: URL | undefined;
  try {
    next = new URL(location, from);
  } catch {
    // Reported below with the non-http(s) ones.
  }
  if (next?.protocol !== 'http:' && next?.protocol !== 'https:') {
    throw unusable(operation, `a redirect from ${sourceOf(from)} to something other than an http(s) address`);
  }
  return next;
}

/** The base an answer counts for, or the foreign origin (CDN) that gave it. */
export function servedBy(route: KeyRoute, at: Answered): string {
  return route.authOrigins.has(at.url.origin) ? at.baseUrl : at.url.origin;
}

export function unusable(operation: GatewayOperation, message: string): GatewayError {
  return operation === 'download' ? new DownloadError(`the video could not be fetched: ${message}`) : new InvalidRequestError(message);
}
