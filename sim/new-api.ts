// The new-api profiles (test/gateways/OBSERVED.md): the channel, chosen by the model, decides what a
// task is (a Veo model, on its Gemini channel, makes a video object on either create route; a
// Seedance task is not readable on /v1/videos/{id}); readings come from the last upstream refresh
// round (refresh.ts); a finished video object's address is its content endpoint under the operator's
// ServerAddress, another host name than the one clients use; the content endpoint relays the video
// without the client's Range. 'new-api-0.10' adds v0.10.0's shapes: the upstream's ids, a create
// answer of only `task_id`, no `result_url` (the address is in `fail_reason`), "task failed" with the
// reason in `data.data`, and a Gemini task read live on the general route in a shape of its own.
import type { Route, RouteCall, SimContext } from './context';
import { checkKey, listModels, pickRenderMs } from './catalog';
import { serveVideo } from './content';
import { acceptCreate } from './create';
import { generalCreateAnswer, polledTask, readGeneralCreate, type CreateRequest } from './general';
import { sendJson } from './http';
import { messages } from './messages';
import { isVideoObjectModel } from './profile';
import { currentReading, readingAt, type Reading } from './refresh';
import { FAIL_REASONS, videosStatus, viewAt, type GeneralStatus, type Task } from './tasks';
import { readVideosCreate } from './videos';
import { asksLastFrame } from './frames';

const v010 = (ctx: SimContext): boolean => ctx.cfg.profile === 'new-api-0.10';
/** A task of the Gemini channel (Veo): a video object. */
const isVideoObject = (task: Task): boolean => task.protocol === 'videos';

function hex(ctx: SimContext, n: number): string {
  return Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(ctx.dice.next('new-api-id') * 16)]).join('');
}

/**
 * v0.10.0 shows the upstream's own ids (Ark `cgt-…`; a Gemini task's is its Veo operation's name in
 * base64url, relay/channel/task/gemini); later releases their own.
 */
function idFor(ctx: SimContext, model: string, video: boolean, createdAt: number): string | undefined {
  if (!v010(ctx)) return undefined;
  if (video) return Buffer.from(`models/${model}/operations/${hex(ctx, 12)}`).toString('base64url');
  return `cgt-${createdAt}-${hex(ctx, 6)}`;
}

/**
 * v0.10.0's general-route reading of a Gemini task (relay/relay_task.go): read live from the
 * upstream, `processing` until the operation is done, the address in `url`; on failure `url` holds
 * what the task records, the reason.
 */
function geminiGeneral(ctx: SimContext, task: Task): Record<string, unknown> {
  task.liveReadAt = ctx.now();
  const { status } = readingAt(task, ctx.now(), ctx.startedAt, 0).view;
  const shown = status === 'SUCCESS' ? 'succeeded' : status === 'FAILURE' ? 'failed' : 'processing';
  const url = shown === 'succeeded' ? videoAddress(ctx, task) : shown === 'failed' ? (task.failReason ?? '') : '';
  const data = { error: null, format: 'mp4', metadata: null, status: shown, task_id: task.id, url };
  return { code: 'success', message: '', data };
}

/** Keys in order, as new-api re-serialises the upstream's object (Go maps are written sorted). */
function sorted(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Whether a refresh round has read the task yet (always, for a gateway set to read live). */
const wasRead = (ctx: SimContext, reading: Reading): boolean => ctx.cfg.refreshMs <= 0 || reading.round > 0;

/** The status and progress the general route shows. */
function generalReading(ctx: SimContext, task: Task, reading: Reading): { status: GeneralStatus; progress: string } {
  const { status, progress } = reading.view;
  if (status === 'SUCCESS' || status === 'FAILURE') return { status, progress: '100%' };
  const read = wasRead(ctx, reading);
  if (status !== 'IN_PROGRESS')
    return read ? { status: 'QUEUED', progress: isVideoObject(task) ? '0%' : '10%' } : { status: 'NOT_START', progress: '0%' };
  // Ark's "running" maps to 30 % whatever the render's progress (v0.10.0 maps only "processing", to 50 %).
  return { status, progress: isVideoObject(task) ? `${progress}%` : '30%' };
}

/** Where the finished video is: a video object's content endpoint on ServerAddress; a Seedance task's upstream file. */
function videoAddress(ctx: SimContext, task: Task): string {
  if (!isVideoObject(task) && ctx.cdn) return ctx.cdn.signedUrl(task.id);
  return `${ctx.cfg.serverAddress}/v1/videos/${task.id}/content`;
}

/** `last_frame_url` of a finished Seedance task that asked for it, on the file host; nothing without one (or without ffmpeg). */
function lastFrameAddress(ctx: SimContext, task: Task): { last_frame_url?: string } {
  if (isVideoObject(task) || !asksLastFrame(task.metadata) || !ctx.cdn || !ctx.videos.usingFfmpeg) return {};
  return { last_frame_url: ctx.cdn.signedFrameUrl(task.id) };
}

const ARK_ERROR_CODES = ['OutputVideoSensitiveContentDetected', 'InputImageSensitiveContentDetected', 'Timeout', 'InternalServiceError'];

function upstreamError(task: Task): { code: string; message: string } {
  const i = FAIL_REASONS.indexOf(task.failReason ?? '');
  return { code: ARK_ERROR_CODES[i] ?? 'InternalServiceError', message: task.failReason ?? 'failed' };
}

/**
 * v0.10.0's video object for a Gemini task (ConvertToOpenAIVideo, after a live read): progress 50
 * until the operation is done, no seconds, size or error.
 */
function geminiVideo(ctx: SimContext, task: Task): Record<string, unknown> {
  task.liveReadAt = ctx.now();
  const { status, finishTime } = readingAt(task, ctx.now(), ctx.startedAt, 0).view;
  const done = status === 'SUCCESS' || status === 'FAILURE';
  return {
    id: task.id,
    object: 'video',
    model: task.model,
    status: done ? videosStatus(status) : 'in_progress',
    progress: done ? 100 : 50,
    created_at: Math.floor(task.createdAt / 1000),
    // Its finish time, else when the task record was last written.
    completed_at: done ? finishTime : Math.floor(ctx.now() / 1000),
  };
}

/** A video object as a newer new-api last read it from the upstream (sorted keys). */
function videoObject(ctx: SimContext, task: Task, reading: Reading): Record<string, unknown> {
  const v = reading.view;
  const status = wasRead(ctx, reading) ? videosStatus(v.status) : 'queued';
  return sorted({
    completed_at: status === 'completed' || status === 'failed' ? v.finishTime : null,
    created_at: v.submitTime,
    error: status === 'failed' ? upstreamError(task) : null,
    expires_at: v.finishTime ? v.finishTime + 3600 : null,
    id: task.id,
    model: task.model,
    object: 'video',
    progress: status === 'queued' ? 0 : v.progress,
    remixed_from_video_id: null,
    seconds: String(task.seconds),
    size: task.size,
    status,
  });
}

/** What a Seedance create's upstream receives of its metadata: v0.10.0 sends only the prompt (test/gateways/OBSERVED.md). */
function passedMetadata(
  ctx: SimContext,
  video: boolean,
  metadata: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (!metadata || video || !v010(ctx)) return metadata;
  const { content: _content, return_last_frame: _last, ...rest } = metadata;
  return rest;
}

/**
 * The Ark task as new-api last read it: right after the create only `{id}`, the create's answer. A
 * finished task created with `return_last_frame` carries `content.last_frame_url` (its PNG on the file host).
 */
function arkTask(ctx: SimContext, task: Task, reading: Reading, address: string): Record<string, unknown> {
  if (!wasRead(ctx, reading)) return { id: task.id };
  const v = reading.view;
  const status =
    v.status === 'SUCCESS' ? 'succeeded' : v.status === 'FAILURE' ? 'failed' : v.status === 'IN_PROGRESS' ? 'running' : 'queued';
  const done = status === 'succeeded' || status === 'failed';
  return sorted({
    ...(status === 'succeeded' ? { content: { video_url: address, ...lastFrameAddress(ctx, task) } } : {}),
    ...(status === 'failed' ? { error: upstreamError(task) } : {}),
    created_at: v.submitTime,
    duration: task.seconds,
    framespersecond: 24,
    id: task.id,
    model: task.model,
    ratio: '16:9',
    resolution: '720p',
    seed: 42,
    status,
    updated_at: done ? v.finishTime : v.submitTime,
    usage: { completion_tokens: status === 'succeeded' ? 108_900 : 0, total_tokens: status === 'succeeded' ? 108_900 : 0 },
  });
}

async function create(
  call: RouteCall,
  read: (call: RouteCall) => CreateRequest | undefined | Promise<CreateRequest | undefined>,
): Promise<void> {
  const { req, res, ctx } = call;
  const r = await read(call);
  if (!r) return;
  const video = isVideoObjectModel(r.model);
  // v0.10.0's Seedance and Gemini channels send their upstream only the prompt (the Gemini one its
  // metadata too): seconds, size, resolution and ratio are dropped and the model's defaults apply.
  const passed = !v010(ctx);
  const createdAt = ctx.now();
  const task = acceptCreate(
    ctx,
    req,
    {
      protocol: video ? 'videos' : 'general',
      model: r.model,
      prompt: r.prompt,
      seconds: (passed ? r.seconds : undefined) ?? r.info.defaultSeconds,
      size: passed ? r.size : '1280x720',
      createdAt,
      renderMs: pickRenderMs(ctx, r.info),
      metadata: passedMetadata(ctx, video, r.metadata),
    },
    idFor(ctx, r.model, video, createdAt),
  );
  if (!task) return;
  if (video && v010(ctx)) {
    // relay/channel/task/gemini DoResponse: new-api's own video object, its status still empty.
    const { id, model } = task;
    return sendJson(res, 200, {
      id,
      task_id: id,
      object: 'video',
      model,
      status: '',
      progress: 0,
      created_at: Math.floor(createdAt / 1000),
    });
  }
  if (video) {
    const at = Math.floor(createdAt / 1000);
    const { id, model, seconds, size } = { ...task, seconds: String(task.seconds) };
    return sendJson(res, 200, { id, object: 'video', model, status: 'queued', progress: 0, created_at: at, seconds, size });
  }
  sendJson(res, 200, v010(ctx) ? { task_id: task.id } : generalCreateAnswer(task));
}

function retrieveGeneral(call: RouteCall): void {
  const { res, ctx } = call;
  const task = polledTask(call);
  if (!task) return;
  const reading = currentReading(ctx, task, true);
  const { status, progress } = generalReading(ctx, task, reading);
  const address = status === 'SUCCESS' ? videoAddress(ctx, task) : '';
  const reason = task.failReason ?? '';
  const times = { submit_time: reading.view.submitTime, start_time: reading.view.startTime, finish_time: reading.view.finishTime };
  if (v010(ctx) && isVideoObject(task)) return sendJson(res, 200, geminiGeneral(ctx, task));
  if (v010(ctx)) {
    const failReason = status === 'SUCCESS' ? address : status === 'FAILURE' ? 'task failed' : '';
    const upstream = isVideoObject(task) ? videoObject(ctx, task, reading) : arkTask(ctx, task, reading, address);
    const data = { task_id: task.id, action: 'generate', status, fail_reason: failReason, ...times, progress, data: upstream };
    return sendJson(res, 200, { code: 'success', message: '', data });
  }
  const failed = status === 'FAILURE';
  // The newer release copies the failure text into result_url, as the gateway of docs/protocol.md §2 does.
  const data: Record<string, unknown> = {
    task_id: task.id,
    status,
    progress,
    result_url: failed ? reason : address,
    fail_reason: failed ? reason : '',
    ...times,
  };
  // It passes metadata on, so a task that asked for its last frame has it: the upstream's task in `data`.
  if (status === 'SUCCESS' && asksLastFrame(task.metadata)) data.data = arkTask(ctx, task, reading, address);
  sendJson(res, 200, { code: 'success', message: '', data });
}

function retrieveVideos(call: RouteCall): void {
  const { res, ctx } = call;
  const task = polledTask(call);
  if (!task) return;
  // Only a channel with a video-object form has this route; a Seedance task's channel (54) does not implement it.
  if (!isVideoObject(task)) return sendJson(res, 501, { code: 'not_implemented', message: 'not_implemented:54', data: null });
  sendJson(res, 200, v010(ctx) ? geminiVideo(ctx, task) : videoObject(ctx, task, currentReading(ctx, task, true)));
}

async function content(call: RouteCall): Promise<void> {
  const { req, res, ctx, id } = call;
  if (!checkKey(ctx, req, res)) return;
  const task = ctx.store.get(id);
  if (!task) return sendJson(res, 404, { error: { message: 'Task not found', type: 'invalid_request_error' } });
  const reading = currentReading(ctx, task);
  // The stored state is the later of the last refresh round and the last live read written back.
  const live = task.liveReadAt === undefined ? undefined : viewAt(task, task.liveReadAt).status;
  const status = live === 'SUCCESS' ? live : generalReading(ctx, task, reading).status;
  if (status !== 'SUCCESS') {
    return sendJson(res, 400, {
      error: { message: `Task is not completed yet, current status: ${status}`, type: 'invalid_request_error' },
    });
  }
  const guarded = ctx.faults.faults.fetchGuardPort;
  if (guarded !== undefined) {
    // The fetch guard refuses the address new-api would fetch the video from.
    ctx.stats.fault('fetch-guard');
    return sendJson(res, 403, { error: { message: `request blocked: port ${guarded} is not allowed` } });
  }
  const body = await ctx.videos.body(task);
  await serveVideo(req, res, body, ctx.faults, ctx.stats, { ignoreRange: true, headers: { 'cache-control': 'public, max-age=86400' } });
}

export const NEW_API_ROUTES = {
  createGeneral: { name: 'POST /v1/video/generations', kind: 'create', handle: (call) => create(call, readGeneralCreate) },
  retrieveGeneral: { name: 'GET /v1/video/generations/:id', kind: 'retrieve', handle: retrieveGeneral },
  createVideos: { name: 'POST /v1/videos', kind: 'create', handle: (call) => create(call, readVideosCreate) },
  retrieveVideos: { name: 'GET /v1/videos/:id', kind: 'retrieve', handle: retrieveVideos },
  content: { name: 'GET /v1/videos/:id/content', kind: 'content', handle: content },
  messages: { name: 'POST /v1/messages', kind: 'messages', handle: messages },
  models: { name: 'GET /v1/models', kind: 'retrieve', handle: listModels },
} satisfies Record<string, Route>;
