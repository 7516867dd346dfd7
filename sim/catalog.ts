// Auth and the key's token group catalog, as the gateway's middleware applies them before any relay.
import type { ServerResponse } from 'node:http';
import type { ModelInfo } from './config';
import type { SimContext } from './context';
import { openaiError, sendJson } from './http';

export function rejectBadKey(res: ServerResponse): void {
  // The real gateway answers every bad or missing token the same way, in the OpenAI shape.
  sendJson(res, 401, openaiError('Invalid token', 'new_api_error', ''));
}

/**
 * Looks the model up in the key's token group. Unknown -> 404 (service document rule 7.1) or, with
 * the switch, the real gateway's 503 "No available channel for model X under group G". Answers and
 * returns undefined when the model is not available.
 */
export function requireModel(ctx: SimContext, res: ServerResponse, model: string): ModelInfo | undefined {
  const info = ctx.cfg.catalog.get(model);
  if (info) return info;
  const group = ctx.cfg.group;
  if (ctx.faults.faults.modelNotFoundAs503) {
    sendJson(res, 503, openaiError(`No available channel for model ${model} under group ${group}`, 'new_api_error', 'model_not_found'));
  } else {
    sendJson(res, 404, openaiError(`model ${model} is not available to this token (group ${group})`, 'new_api_error', 'model_not_found'));
  }
  return undefined;
}

/** Render time for a new task: the options' fixed or ranged time, else the model's own range. */
export function pickRenderMs(ctx: SimContext, info: ModelInfo): number {
  const r = ctx.cfg.renderMs ?? info.renderMs;
  if (typeof r === 'number') return r;
  return ctx.dice.between('render-ms', r[0], r[1]);
}
