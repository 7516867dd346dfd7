// The alternative (OpenAI-style) video protocol: POST /v1/videos (multipart), GET /v1/videos/{id},
// GET /v1/videos/{id}/content. Validation and content errors use the OpenAI error shape.
import type { RouteCall } from './context';
import { acceptCreate } from './create';
import type { Task, TaskView } from './tasks';
import { openaiError, sendJson } from './http';
import { checkKey, pickRenderMs, requireModel } from './catalog';
import { serveVideo } from './content';
import { polledTask, type CreateRequest } from './general';
import { normaliseSize } from './mp4';
import { currentReading } from './refresh';
import { videosStatus, viewAt } from './tasks';
import { validateSeconds, validateSize } from './validate';
import { MAX_FRAME_BYTES } from './frames';

const invalid = (message: string): unknown => openaiError(message, 'invalid_request_error', 'invalid_request');

/** Multipart (what the OpenAI SDK sends) or JSON: the gateway binds either into the same struct. */
export async function readFields(call: RouteCall): Promise<Record<string, unknown> | string> {
  const read = await readForm(call);
  return typeof read === 'string' ? read : read.fields;
}

/**
 * The fields, a file field described by its name, type and size; and the image sent as
 * `input_reference` (the openai protocol's one image, a first frame: docs/chains.md), when there is one
 * of a sane size, so the video can start from it.
 */
async function readForm(call: RouteCall): Promise<{ fields: Record<string, unknown>; inputImage?: Buffer } | string> {
  const type = call.req.headers['content-type'] ?? '';
  if (type.startsWith('multipart/form-data')) {
    try {
      const form = await new Request('http://sim.invalid/', {
        method: 'POST',
        headers: { 'content-type': type },
        body: call.body,
      }).formData();
      const out: Record<string, unknown> = {};
      let inputImage: Buffer | undefined;
      for (const [k, v] of form.entries()) {
        out[k] = typeof v === 'string' ? v : { filename: v.name, type: v.type, bytes: v.size };
        if (k === 'input_reference' && typeof v !== 'string' && v.type.startsWith('image/') && v.size > 0 && v.size <= MAX_FRAME_BYTES) {
          inputImage = Buffer.from(await v.arrayBuffer());
        }
      }
      return inputImage ? { fields: out, inputImage } : { fields: out };
    } catch (e) {
      return `invalid multipart body: ${(e as Error).message}`;
    }
  }
  try {
    const parsed: unknown = JSON.parse(call.body.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'request body must be a JSON object';
    return { fields: parsed as Record<string, unknown> };
  } catch (e) {
    return `invalid request body: ${(e as Error).message}`;
  }
}

export function videoObject(task: Task, v: TaskView): Record<string, unknown> {
  const status = videosStatus(v.status);
  return {
    id: task.id,
    object: 'video',
    model: task.model,
    status,
    progress: v.progress,
    created_at: v.submitTime,
    completed_at: v.finishTime || null,
    expires_at: v.finishTime ? v.finishTime + 86_400 : null,
    prompt: task.prompt,
    seconds: String(task.seconds),
    size: task.size,
    remixed_from_video_id: null,
    error: status === 'failed' ? { code: 'video_generation_failed', message: task.failReason ?? 'failed' } : null,
  };
}

/** Reads and checks a videos create; answers the error and returns undefined when it is not valid. */
export async function readVideosCreate(call: RouteCall): Promise<CreateRequest | undefined> {
  const { req, res, ctx } = call;
  const refuse = (message: string): undefined => void sendJson(res, 400, invalid(message));
  if (!checkKey(ctx, req, res)) return undefined;
  const read = await readForm(call);
  if (typeof read === 'string') return refuse(read);
  const { model, prompt, seconds, size, ...rest } = read.fields;
  if (typeof model !== 'string' || model === '') return refuse('model is required');
  const info = requireModel(ctx, res, model);
  if (!info) return undefined;
  if (info.kind !== 'video') return refuse(`model ${model} does not support video generation`);
  if (typeof prompt !== 'string' || prompt.trim() === '') return refuse('prompt is required');
  const err = validateSeconds(seconds, ctx.cfg.profile) ?? validateSize(size);
  if (err) return refuse(err);
  return {
    model,
    info,
    prompt,
    seconds: seconds === undefined ? undefined : Number(seconds),
    size: normaliseSize(size as string | undefined),
    metadata: rest,
    ...(read.inputImage ? { firstFrame: read.inputImage } : {}),
  };
}

export async function createVideos(call: RouteCall): Promise<void> {
  const { req, res, ctx } = call;
  const r = await readVideosCreate(call);
  if (!r) return;
  const task = acceptCreate(ctx, req, {
    protocol: 'videos',
    model: r.model,
    prompt: r.prompt,
    seconds: r.seconds ?? r.info.defaultSeconds,
    size: r.size,
    createdAt: ctx.now(),
    renderMs: pickRenderMs(ctx, r.info),
    metadata: r.metadata,
    ...(r.firstFrame ? { firstFrame: r.firstFrame } : {}),
  });
  if (!task) return;
  // The creation answer is always "queued" with progress 0, whatever the timeline says.
  sendJson(res, 200, { ...videoObject(task, viewAt(task, task.createdAt)), status: 'queued', progress: 0 });
}

export function retrieveVideos(call: RouteCall): void {
  const { res, ctx } = call;
  const task = polledTask(call);
  if (task) sendJson(res, 200, videoObject(task, currentReading(ctx, task, true).view));
}

export async function downloadContent(call: RouteCall): Promise<void> {
  const { req, res, ctx, id } = call;
  if (!checkKey(ctx, req, res)) return;
  const task = ctx.store.get(id);
  if (!task) return sendJson(res, 404, openaiError('Task not found', 'invalid_request_error', 'task_not_found'));
  const v = currentReading(ctx, task).view;
  if (v.status !== 'SUCCESS') {
    return sendJson(
      res,
      400,
      openaiError(`Task is not completed yet, current status: ${v.status}`, 'invalid_request_error', 'task_not_completed'),
    );
  }
  if (ctx.cdn && ctx.cfg.contentRedirect) {
    res.writeHead(302, { location: ctx.cdn.signedUrl(task.id), 'content-length': 0 });
    res.end();
    return;
  }
  const body = await ctx.videos.body(task);
  await serveVideo(req, res, body, ctx.faults, ctx.stats);
}
