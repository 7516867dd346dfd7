// Auth and the key's token group catalog, as the gateway's middleware applies them before any relay.
// Each profile answers a bad key or an unknown model in its gateway's own words (OBSERVED.md).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ModelInfo } from './config';
import type { RouteCall, SimContext } from './context';
import { openaiError, requestId, sendJson, sendText } from './http';
import { litellmKeyRefused, litellmUnknownModel } from './litellm-errors';
import { isNewApi, isVideoObjectModel } from './profile';

/** The key a request carries: `Authorization: Bearer`, or `x-api-key` where `xApiKey` says the route takes it. */
export function keyOf(req: IncomingMessage, xApiKey = false): string | undefined {
  const x = req.headers['x-api-key'];
  if (xApiKey && typeof x === 'string') return x;
  const h = req.headers['authorization'];
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(h.trim());
  return m ? m[1] : undefined;
}

/**
 * True when the request's key is accepted; otherwise answers as the profile's gateway does and
 * returns false. LiteLLM takes `x-api-key` on every route; the others only on Messages.
 */
export function checkKey(ctx: SimContext, req: IncomingMessage, res: ServerResponse, xApiKey = false): boolean {
  const litellm = ctx.cfg.profile === 'litellm';
  const key = keyOf(req, xApiKey || litellm);
  if (key !== undefined && ctx.cfg.keys.has(key)) return true;
  if (litellm) {
    // Its auth error handler imports prisma, which litellm[proxy] does not install: a bare 500.
    if (key === undefined) sendText(res, 500, 'Internal Server Error', 'text/plain; charset=utf-8');
    else litellmKeyRefused(res, key, ctx.cfg.litellmDatabase);
  } else if (isNewApi(ctx.cfg.profile)) {
    sendJson(res, 401, {
      error: {
        code: '',
        message: `${key === undefined ? '未提供令牌' : '无效的令牌'} (request id: ${requestId()})`,
        type: 'new_api_error',
      },
    });
  } else {
    // The gateway of docs/protocol.md answers every bad or missing token the same way, in the OpenAI shape.
    sendJson(res, 401, openaiError('Invalid token', 'new_api_error', ''));
  }
  return false;
}

/**
 * Looks the model up in the key's token group. Unknown -> 404 (service document rule 7.1) or, with
 * the switch, the real gateway's 503 "No available channel for model X under group G"; new-api
 * profiles always answer the 503 in new-api's words, LiteLLM a 400. Answers and returns undefined
 * when the model is not available.
 */
export function requireModel(
  ctx: SimContext,
  res: ServerResponse,
  model: string,
  route: 'video' | 'messages' = 'video',
): ModelInfo | undefined {
  const info = ctx.cfg.catalog.get(model);
  if (info) return info;
  const group = ctx.cfg.group;
  if (ctx.cfg.profile === 'litellm') {
    litellmUnknownModel(res, model, route);
  } else if (isNewApi(ctx.cfg.profile)) {
    sendJson(res, 503, {
      error: {
        code: 'model_not_found',
        message: `分组 ${group} 下模型 ${model} 无可用渠道（distributor） (request id: ${requestId()})`,
        type: 'new_api_error',
      },
    });
  } else if (ctx.faults.faults.modelNotFoundAs503) {
    sendJson(res, 503, openaiError(`No available channel for model ${model} under group ${group}`, 'new_api_error', 'model_not_found'));
  } else {
    sendJson(res, 404, openaiError(`model ${model} is not available to this token (group ${group})`, 'new_api_error', 'model_not_found'));
  }
  return undefined;
}

/**
 * LiteLLM's `GET /v1/model/info` (test/gateways/OBSERVED.md, "Published prices"): one entry per
 * deployment, in its shape, and no prices, as a proxy whose config gives none: reelflow then names
 * the models it cannot price. The key is required.
 */
export function litellmModelInfo({ req, res, ctx }: RouteCall): void {
  if (!checkKey(ctx, req, res)) return;
  const data = [...ctx.cfg.catalog.entries()].map(([id, info]) => ({
    model_name: id,
    litellm_params: { model: `openai/${id}` },
    model_info: { id: `sim-${id}`, mode: info.kind === 'video' ? 'video_generation' : 'chat', db_model: false },
  }));
  sendJson(res, 200, { data });
}

/**
 * new-api's `GET /api/pricing` (test/gateways/OBSERVED.md, "Published prices"), when the simulator is
 * given `publishedPrices`: public (no key), one entry per priced model in v0.10.0's shape, the
 * `default` group at ratio 1. A Veo model's Gemini channel says `gemini` and `openai`, as
 * common/endpoint_type.go does; every price is per call.
 */
export function newApiPricing({ res, ctx }: RouteCall): void {
  const data = Object.entries(ctx.cfg.publishedPrices ?? {}).map(([model, price]) => ({
    model_name: model,
    quota_type: 1,
    model_ratio: 0,
    model_price: price,
    owner_by: '',
    completion_ratio: 0,
    enable_groups: ['default'],
    supported_endpoint_types: isVideoObjectModel(model) ? ['gemini', 'openai'] : ['openai'],
  }));
  sendJson(res, 200, { success: true, data, group_ratio: { default: 1 }, auto_groups: ['default'] });
}

/**
 * new-api's public `GET /api/status` (no key), trimmed to the keys reelflow reads: its release
 * (v0.10.0 for the `new-api-0.10` profile, a newer one for `new-api`) and two keys it always has.
 */
export function newApiStatus({ res, ctx }: RouteCall): void {
  const version = ctx.cfg.profile === 'new-api-0.10' ? 'v0.10.0' : 'v0.11.0';
  sendJson(res, 200, { success: true, message: '', data: { version, system_name: 'New API', quota_per_unit: 500000, start_time: 0 } });
}

/**
 * `GET /v1/models`: the key's catalog (the simulator's configured models) in the OpenAI list shape,
 * as each gateway writes it (test/gateways/OBSERVED.md). The key is required, as on every route.
 * LiteLLM adds its `mode`; new-api sorts by id and adds `supported_endpoint_types` and `success`.
 */
export function listModels({ req, res, ctx }: RouteCall): void {
  if (!checkKey(ctx, req, res)) return;
  const entries = [...ctx.cfg.catalog.entries()];
  if (ctx.cfg.profile === 'litellm') {
    const data = entries.map(([id, info]) => ({
      id,
      object: 'model',
      created: 1677610602,
      owned_by: 'openai',
      mode: info.kind === 'video' ? 'video_generation' : 'chat',
    }));
    return sendJson(res, 200, { data, object: 'list' });
  }
  if (isNewApi(ctx.cfg.profile)) {
    // Sorted by id; owned_by is the channel type's vendor (volcengine for Seedance's, custom for the others seen).
    const data = entries
      .map(([id]) => id)
      .sort()
      .map((id) => ({
        id,
        object: 'model',
        created: 1626777600,
        owned_by: /^seedance/i.test(id) ? 'volcengine' : 'custom',
        supported_endpoint_types: [],
      }));
    return sendJson(res, 200, { data, object: 'list', success: true });
  }
  const data = entries.map(([id]) => ({ id, object: 'model', created: 1677610602, owned_by: 'reelflow-sim' }));
  sendJson(res, 200, { object: 'list', data });
}

/** Render time for a new task: the options' fixed or ranged time, else the model's own range. */
export function pickRenderMs(ctx: SimContext, info: ModelInfo): number {
  const r = ctx.cfg.renderMs ?? info.renderMs;
  if (typeof r === 'number') return r;
  return ctx.dice.between('render-ms', r[0], r[1]);
}
