// The route table: six protocol endpoints and the key's model catalog. Matching is by hand on split paths (no regex per request
// beyond the id check): status checks must stay cheap.
import { listModels, newApiPricing, newApiStatus } from './catalog';
import type { Route } from './context';
import { createGeneral, retrieveGeneral } from './general';
import { matchLitellmRoute } from './litellm';
import { messages } from './messages';
import { NEW_API_ROUTES } from './new-api';
import { isNewApi, type SimProfile } from './profile';
import { createVideos, downloadContent, retrieveVideos } from './videos';

const R = {
  createGeneral: { name: 'POST /v1/video/generations', kind: 'create', handle: createGeneral },
  retrieveGeneral: { name: 'GET /v1/video/generations/:id', kind: 'retrieve', handle: retrieveGeneral },
  createVideos: { name: 'POST /v1/videos', kind: 'create', handle: createVideos },
  retrieveVideos: { name: 'GET /v1/videos/:id', kind: 'retrieve', handle: retrieveVideos },
  content: { name: 'GET /v1/videos/:id/content', kind: 'content', handle: downloadContent },
  messages: { name: 'POST /v1/messages', kind: 'messages', handle: messages },
  models: { name: 'GET /v1/models', kind: 'retrieve', handle: listModels },
} satisfies Record<string, Route>;

type RouteTable = typeof R;

const ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** new-api's public price list: served only when the simulator is given prices to publish. */
const PRICING: Route = { name: 'GET /api/pricing', kind: 'retrieve', handle: newApiPricing };
/** new-api's public status, which names its release. */
const STATUS: Route = { name: 'GET /api/status', kind: 'retrieve', handle: newApiStatus };

/**
 * Finds the route for a method and path (query already stripped) in the profile's gateway;
 * `publishesPrices`: the simulator was given prices, which new-api's price list answers.
 */
export function matchRoute(
  method: string,
  path: string,
  profile: SimProfile = 'default',
  publishesPrices = false,
): { route: Route; id: string } | null {
  if (profile === 'litellm') return matchLitellmRoute(method, path);
  if (publishesPrices && path === '/api/pricing' && (method === 'GET' || method === 'HEAD')) return { route: PRICING, id: '' };
  if (isNewApi(profile) && path === '/api/status' && (method === 'GET' || method === 'HEAD')) return { route: STATUS, id: '' };
  return matchIn(isNewApi(profile) ? NEW_API_ROUTES : R, method, path);
}

function matchIn(R: RouteTable, method: string, path: string): { route: Route; id: string } | null {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const seg = p.split('/');
  // seg[0] is '' (leading slash); seg[1] must be v1
  if (seg[1] !== 'v1') return null;
  const head = method === 'HEAD' ? 'GET' : method;
  if (seg[2] === 'video' && seg[3] === 'generations') {
    if (seg.length === 4 && head === 'POST') return { route: R.createGeneral, id: '' };
    if (seg.length === 5 && head === 'GET' && ID.test(seg[4] ?? '')) return { route: R.retrieveGeneral, id: seg[4] as string };
    return null;
  }
  if (seg[2] === 'videos') {
    if (seg.length === 3 && head === 'POST') return { route: R.createVideos, id: '' };
    const id = seg[3] ?? '';
    if (!ID.test(id)) return null;
    if (seg.length === 4 && head === 'GET') return { route: R.retrieveVideos, id };
    if (seg.length === 5 && seg[4] === 'content' && head === 'GET') return { route: R.content, id };
    return null;
  }
  if (seg[2] === 'messages' && seg.length === 3 && head === 'POST') return { route: R.messages, id: '' };
  if (seg[2] === 'models' && seg.length === 3 && head === 'GET') return { route: R.models, id: '' };
  return null;
}
