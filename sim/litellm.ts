// The LiteLLM proxy profile (1.106, test/gateways/OBSERVED.md): only the OpenAI videos protocol and
// Messages (with or without /v1), its long ids, a retrieve that answers a different id than the
// create's, `Range` ignored on content, and its error shapes. The simulated upstream is the task
// store itself: LiteLLM reads it live on every check.
import type { RouteCall, Route } from './context';
import { checkKey, listModels, litellmModelInfo, pickRenderMs, requireModel } from './catalog';
import { serveVideo } from './content';
import { acceptCreate } from './create';
import { sendJson } from './http';
import { sendUnroutable, wrappedUpstreamError } from './litellm-errors';
import { messages } from './messages';
import { normaliseSize } from './mp4';
import { isUpstreamUnknown } from './profile';
import { type Task, videosStatus, viewAt } from './tasks';
import { validateSeconds, validateSize } from './validate';
import { readFields } from './videos';

const PREFIX = 'litellm:custom_llm_provider:openai;';

/** `video_` + base64 of `litellm:custom_llm_provider:openai;model_id:<model id>;video_id:<upstream id>`. */
export function encodeLitellmId(modelId: string, upstreamId: string): string {
  return `video_${Buffer.from(`${PREFIX}model_id:${modelId};video_id:${upstreamId}`, 'utf8').toString('base64')}`;
}

/** The model id and upstream id inside a LiteLLM video id; undefined when it is not one. */
export function decodeLitellmId(id: string): { modelId: string; upstreamId: string } | undefined {
  if (!id.startsWith('video_')) return undefined;
  const text = Buffer.from(id.slice('video_'.length), 'base64').toString('utf8');
  const m = /^litellm:custom_llm_provider:[^;]*;model_id:([^;]*);video_id:(.+)$/s.exec(text);
  return m ? { modelId: m[1] as string, upstreamId: m[2] as string } : undefined;
}

/**
 * The simulated upstream's id for a new video: `video_` and 32 hex digits, with a `~` and a `?`
 * where LiteLLM's base64 turns them into `+` and `/` (the last byte of a 3-byte group), and a length
 * that leaves `=` padding. Real ids hold those characters only when the provider's id or the
 * deployment's model id does; here every id does, so a client that does not percent-encode its
 * paths fails on every call, not one in many.
 */
export function upstreamIdFor(modelId: string, random: () => number): string {
  const hex = Array.from({ length: 32 }, () => '0123456789abcdef'[Math.floor(random() * 16)] as string);
  const start = `${PREFIX}model_id:${modelId};video_id:video_`.length;
  const lastOfGroup = (i: number): boolean => (start + i) % 3 === 2;
  const plus = hex.findIndex((_, i) => i >= 4 && lastOfGroup(i));
  hex[plus] = '~';
  hex[plus + 3] = '?';
  if ((start + hex.length) % 3 === 0) hex.pop();
  return `video_${hex.join('')}`;
}

/** The task an id names, or undefined after answering as LiteLLM does for an id it cannot serve. */
function taskFor(call: RouteCall): Task | undefined {
  const { ctx, res, id } = call;
  const decoded = decodeLitellmId(id);
  // An id it cannot decode, or one without a model id (what its own retrieve answers), is sent to api.openai.com.
  if (!decoded || decoded.modelId === '') {
    sendUnroutable(res);
    return undefined;
  }
  const task = ctx.store.get(id);
  const windowMs = ctx.faults.faults.notExistWindowMs ?? 0;
  if (task && ctx.now() - task.createdAt >= windowMs) return task;
  if (task) ctx.stats.fault('task-not-exist');
  // The upstream's 404, carried with LiteLLM's "BadRequestError" text under a 404 status.
  sendJson(res, 404, wrappedUpstreamError(404, 'BadRequestError', { message: 'Video not found', code: 'not_found' }, decoded.modelId));
  return undefined;
}

/** The upstream's video object as LiteLLM passes it on; `id` is the id LiteLLM shows for it. */
function litellmVideo(task: Task, id: string, now: number): Record<string, unknown> {
  const v = viewAt(task, now);
  const status = videosStatus(v.status);
  return {
    id,
    object: 'video',
    status,
    created_at: v.submitTime,
    completed_at: v.finishTime || null,
    expires_at: v.finishTime ? v.finishTime + 3600 : null,
    error: status === 'failed' ? { code: 'moderation_blocked', message: task.failReason ?? 'failed' } : null,
    progress: v.progress,
    remixed_from_video_id: null,
    seconds: String(task.seconds),
    size: task.size,
    model: task.model,
    usage: null,
  };
}

async function create(call: RouteCall): Promise<void> {
  const { req, res, ctx } = call;
  if (!checkKey(ctx, req, res)) return;
  const fields = await readFields(call);
  if (typeof fields === 'string') {
    return sendJson(res, 400, wrappedUpstreamError(400, 'BadRequestError', { message: fields, code: 'invalid_request' }, undefined));
  }
  const { model, prompt, seconds, size, ...rest } = fields;
  const name = typeof model === 'string' ? model : 'None';
  const info = requireModel(ctx, res, name);
  if (!info) return;
  if (isUpstreamUnknown(name) || info.kind !== 'video') {
    const upstream = { message: `The model '${name}' does not exist`, code: 'model_not_found' };
    return sendJson(res, 404, wrappedUpstreamError(404, 'NotFoundError', upstream, name));
  }
  const invalid =
    typeof prompt !== 'string' || prompt.trim() === '' ? 'prompt is required' : (validateSeconds(seconds, 'litellm') ?? validateSize(size));
  if (invalid) return sendJson(res, 400, wrappedUpstreamError(400, 'BadRequestError', { message: invalid, code: 'invalid_request' }, name));
  const createdAt = ctx.now();
  const id = encodeLitellmId(
    name,
    upstreamIdFor(name, () => ctx.dice.next('litellm-id')),
  );
  const task = acceptCreate(
    ctx,
    req,
    {
      protocol: 'videos',
      model: name,
      prompt: prompt as string,
      seconds: seconds === undefined ? info.defaultSeconds : Number(seconds),
      size: normaliseSize(size as string | undefined),
      createdAt,
      renderMs: pickRenderMs(ctx, info),
      metadata: rest,
    },
    id,
  );
  if (!task) return;
  sendJson(res, 200, {
    ...litellmVideo(task, task.id, createdAt),
    status: 'queued',
    progress: 0,
    usage: { duration_seconds: task.seconds },
  });
}

function retrieve(call: RouteCall): void {
  const { req, res, ctx, id } = call;
  if (!checkKey(ctx, req, res)) return;
  ctx.stats.poll(id);
  const task = taskFor(call);
  if (!task) return;
  // Its retrieve re-encodes the upstream's id with an empty model id: an id that then works nowhere.
  const shown = encodeLitellmId('', decodeLitellmId(id)?.upstreamId ?? '');
  sendJson(res, 200, litellmVideo(task, shown, ctx.now()));
}

async function content(call: RouteCall): Promise<void> {
  const { req, res, ctx } = call;
  if (!checkKey(ctx, req, res)) return;
  const task = taskFor(call);
  if (!task) return;
  if (viewAt(task, ctx.now()).status !== 'SUCCESS') {
    const upstream = { message: 'Video is not ready', code: 'invalid_request' };
    return sendJson(res, 400, wrappedUpstreamError(400, 'BadRequestError', upstream, task.model));
  }
  // It streams the upstream's answer to a request without Range: always 200 and the whole video.
  await serveVideo(req, res, await ctx.videos.body(task), ctx.faults, ctx.stats, { ignoreRange: true });
}

const R = {
  create: { name: 'POST /v1/videos', kind: 'create', handle: create },
  retrieve: { name: 'GET /v1/videos/:id', kind: 'retrieve', handle: retrieve },
  content: { name: 'GET /v1/videos/:id/content', kind: 'content', handle: content },
  messages: { name: 'POST /v1/messages', kind: 'messages', handle: messages },
  models: { name: 'GET /v1/models', kind: 'retrieve', handle: listModels },
  modelInfo: { name: 'GET /v1/model/info', kind: 'retrieve', handle: litellmModelInfo },
} satisfies Record<string, Route>;

/** LiteLLM's routes, with or without `/v1`; a path segment is percent-decoded as FastAPI does. */
export function matchLitellmRoute(method: string, path: string): { route: Route; id: string } | null {
  const seg = path.split('/').slice(1);
  if (seg[0] === 'v1') seg.shift();
  const head = method === 'HEAD' ? 'GET' : method;
  if (seg.length === 1 && seg[0] === 'messages' && head === 'POST') return { route: R.messages, id: '' };
  if (seg.length === 1 && seg[0] === 'models' && head === 'GET') return { route: R.models, id: '' };
  if (seg.length === 2 && seg[0] === 'model' && seg[1] === 'info' && head === 'GET') return { route: R.modelInfo, id: '' };
  if (seg[0] !== 'videos') return null;
  if (seg.length === 1 && head === 'POST') return { route: R.create, id: '' };
  let id: string;
  try {
    id = decodeURIComponent(seg[1] ?? '');
  } catch {
    return null;
  }
  if (id === '' || head !== 'GET') return null;
  if (seg.length === 2) return { route: R.retrieve, id };
  if (seg.length === 3 && seg[2] === 'content') return { route: R.content, id };
  return null;
}
