// The general task protocol: POST /v1/video/generations and GET /v1/video/generations/{id}.
// Errors use the task shape {"code","message","data":null}; auth and catalog errors the OpenAI shape.
import type { ModelInfo } from './config';
import type { RouteCall } from './context';
import { acceptCreate } from './create';
import { sendJson, taskError } from './http';
import { checkKey, pickRenderMs, requireModel } from './catalog';
import { sizeFromResolution } from './mp4';
import { currentReading } from './refresh';
import type { Task } from './tasks';
import { validateSeconds } from './validate';
import { IMAGE_ROLES, isSeedance, mixesFramesAndReferences, SEEDANCE_MIX_REFUSAL } from './frames';

const CONTENT_ROLES: Record<string, string> = {
  image_url: 'reference_image',
  video_url: 'reference_video',
  audio_url: 'reference_audio',
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks metadata.content the way the gateway does; returns an error message or null. */
function checkContent(content: unknown): string | null {
  if (content === undefined) return null;
  if (!Array.isArray(content)) return 'metadata.content must be an array';
  for (const [i, item] of content.entries()) {
    if (!isObject(item)) return `metadata.content[${i}] must be an object`;
    const type = item['type'];
    if (typeof type !== 'string' || !(type in CONTENT_ROLES)) {
      return `metadata.content[${i}].type ${JSON.stringify(type)} is not one of image_url, video_url, audio_url`;
    }
    const ref = item[type];
    if (!isObject(ref) || typeof ref['url'] !== 'string' || ref['url'] === '') {
      return `metadata.content[${i}].${type}.url is required`;
    }
    const role = item['role'];
    const allowed = type === 'image_url' ? IMAGE_ROLES : [CONTENT_ROLES[type]];
    if (role !== undefined && !allowed.includes(role as string)) {
      return `metadata.content[${i}].role ${JSON.stringify(role)} does not match type ${type} (expected ${allowed.join(' or ')})`;
    }
  }
  return null;
}

/** A valid create request of either protocol, as the gateway has read it. */
export interface CreateRequest {
  model: string;
  info: ModelInfo;
  prompt: string;
  /** The seconds asked for, or undefined. */
  seconds: number | undefined;
  /** WxH asked for (from size, or resolution and ratio). */
  size: string;
  /** Fields passed on to the upstream beside the known ones. */
  metadata?: Record<string, unknown>;
  /** The openai protocol's `input_reference` image, which the video starts from (sim/frames.ts). */
  firstFrame?: Buffer;
}

/** Reads and checks a general create; answers the error and returns undefined when it is not valid. */
export function readGeneralCreate({ req, res, ctx, body }: RouteCall): CreateRequest | undefined {
  const refuse = (message: string): undefined => void sendJson(res, 400, taskError('invalid_request', message));
  if (!checkKey(ctx, req, res)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (e) {
    return refuse(`invalid request body: ${(e as Error).message}`);
  }
  if (!isObject(parsed)) return refuse('request body must be a JSON object');
  const { model, prompt, seconds, metadata } = parsed;
  if (typeof model !== 'string' || model === '') return refuse('model is required');
  const info = requireModel(ctx, res, model);
  if (!info) return undefined;
  if (info.kind !== 'video') {
    return refuse(`model ${model} does not support video generation`);
  }
  if (typeof prompt !== 'string' || prompt.trim() === '') {
    return refuse('prompt is required');
  }
  const secErr = validateSeconds(seconds, ctx.cfg.profile);
  if (secErr) return refuse(secErr);
  if (metadata !== undefined && !isObject(metadata)) {
    return refuse('metadata must be an object');
  }
  const contentErr = checkContent(metadata?.['content']);
  if (contentErr) return refuse(contentErr);
  // Seedance's own refusal, before any task exists (nothing billed). new-api v0.10.0 sends its
  // upstream only the prompt, so there the content never reaches Seedance to be refused.
  const content = metadata?.['content'];
  if (isSeedance(model) && ctx.cfg.profile !== 'new-api-0.10' && Array.isArray(content) && mixesFramesAndReferences(content)) {
    return refuse(SEEDANCE_MIX_REFUSAL);
  }
  const size = sizeFromResolution(metadata?.['resolution'], metadata?.['ratio']);
  return { model, info, prompt, seconds: seconds === undefined ? undefined : Number(seconds), size, metadata };
}

export function createGeneral(call: RouteCall): void {
  const { req, res, ctx } = call;
  const r = readGeneralCreate(call);
  if (!r) return;
  const { model, info, prompt, size, metadata } = r;
  // Processed and billed even when the answer is lost: the case docs/protocol.md §6 is about.
  const task = acceptCreate(ctx, req, {
    protocol: 'general',
    model,
    prompt,
    seconds: r.seconds ?? info.defaultSeconds,
    size,
    createdAt: ctx.now(),
    renderMs: pickRenderMs(ctx, info),
    metadata,
  });
  if (!task) return;
  sendJson(res, 200, generalCreateAnswer(task));
}

/** The create answer of docs/protocol.md §2: the id under both names, as a queued video. */
export function generalCreateAnswer(task: Task): Record<string, unknown> {
  return {
    id: task.id,
    task_id: task.id,
    object: 'video',
    model: task.model,
    status: 'queued',
    progress: 0,
    created_at: Math.floor(task.createdAt / 1000),
  };
}

/**
 * What every status check does first: the key, the poll count, the not-exist window. The task, or
 * undefined when the answer has been sent already.
 */
export function polledTask(call: RouteCall): Task | undefined {
  const { req, res, ctx, id } = call;
  if (!checkKey(ctx, req, res)) return undefined;
  ctx.stats.poll(id);
  const hint = ctx.faults.faults.pollAfterMs;
  if (hint !== undefined) call.res.setHeader('openai-poll-after-ms', String(hint));
  if (notExist(call)) return undefined;
  return ctx.store.get(id);
}

/** Inside the not-exist window (or for unknown ids) the gateway answers 400 task_not_exist. */
export function notExist(call: RouteCall): boolean {
  const { ctx, id } = call;
  const task = ctx.store.get(id);
  const windowMs = ctx.faults.faults.notExistWindowMs ?? 0;
  if (task && ctx.now() - task.createdAt >= windowMs) return false;
  if (task) ctx.stats.fault('task-not-exist');
  sendJson(call.res, 400, taskError('task_not_exist', 'task_not_exist'));
  return true;
}

export function retrieveGeneral(call: RouteCall): void {
  const { res, ctx, base } = call;
  const task = polledTask(call);
  if (!task) return;
  const v = currentReading(ctx, task, true).view;
  let resultUrl = '';
  if (v.status === 'SUCCESS') resultUrl = ctx.cdn ? ctx.cdn.signedUrl(task.id) : `${base}/v1/videos/${task.id}/content`;
  // The real gateway copies the failure text into result_url: clients must not fetch it.
  if (v.status === 'FAILURE') resultUrl = task.failReason ?? '';
  sendJson(res, 200, {
    code: 'success',
    message: '',
    data: {
      task_id: task.id,
      status: v.status,
      progress: `${v.progress}%`,
      result_url: resultUrl,
      fail_reason: v.status === 'FAILURE' ? (task.failReason ?? '') : '',
      submit_time: v.submitTime,
      start_time: v.startTime,
      finish_time: v.finishTime,
    },
  });
}
