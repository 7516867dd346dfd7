// A fake upstream provider behind the real gateways (LiteLLM, new-api) in the gateway tests: the
// Gemini API's Veo long-running operations, the OpenAI videos API, the Ark (Volcengine Seedance)
// content-generation tasks API and Anthropic Messages, on 127.0.0.1. Written from the providers' public API shapes, not from reelflow's
// simulator, so the gateways are tested against a reading of the protocol reelflow did not make.
// It counts creates per prompt (one paid render per item) and records every request's path and
// headers, so tests can prove the gateway key never reaches the upstream or its file host.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SAMPLE_MP4 } from '../../sim/mp4';

export interface UpstreamRequest {
  method: string;
  /** Path with query string. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The body as text, cut at 4 KiB (multipart uploads carry file bytes). */
  body: string;
}

export interface FakeUpstreamOptions {
  /** How long a render takes from create to finished (default 1 s). */
  renderMs?: number;
}

export interface FakeUpstream {
  /** Root address, no path: `http://127.0.0.1:<port>`. */
  url: string;
  /** The provider key the gateway must be configured with (never the gateway's own key). */
  apiKey: string;
  /** The MP4 every finished task serves. */
  video: Buffer;
  requests: UpstreamRequest[];
  /** Creates received (video tasks, both APIs) for one prompt. */
  createsFor(prompt: string): number;
  /** Creates received in all, for every prompt. */
  createCount(): number;
  stop(): Promise<void>;
}

/** A prompt containing this makes the create answer 500, as an upstream outage does. */
export const FAIL_CREATE_500 = '[upstream-500]';
/** A prompt containing this makes the task end failed, with a reason. */
export const FAIL_RENDER = '[render-fails]';
/**
 * A prompt containing this makes a finished Ark task carry `content.last_frame_url` whether or not
 * the create asked (`return_last_frame: true`, which Seedance answers the same way): for gateways that
 * do not pass the request's metadata on.
 */
export const LAST_FRAME_ANYWAY = '[last-frame]';
/** The PNG a finished Ark task's `content.last_frame_url` serves: a 1x1 picture. */
export const LAST_FRAME_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC',
  'base64',
);
/** What the upstream's Messages model answers to `prompt`: a job's enhanced prompt, which its create then carries. */
export function enhanced(prompt: string): string {
  return `A cinematic shot: ${prompt}`;
}
/** The models the upstream knows; others are refused as each provider does. */
const MODELS = new Set(['veo-3.1-fast-generate-001', 'seedance-1-0-pro-250528', 'doubao-seedance-2-0-260128', 'claude-sonnet-4-6']);

interface Task {
  id: string;
  api: 'openai' | 'ark' | 'gemini';
  model: string;
  prompt: string;
  createdMs: number;
  seconds: string;
  size: string;
  /** An Ark task that hands back its last frame (asked for, or LAST_FRAME_ANYWAY). */
  lastFrame?: boolean;
}

export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const renderMs = options.renderMs ?? 1000;
  const apiKey = `upstream-${randomBytes(12).toString('hex')}`;
  const video = readFileSync(SAMPLE_MP4);
  const requests: UpstreamRequest[] = [];
  const creates = new Map<string, number>();
  const tasks = new Map<string, Task>();
  let url = '';

  const progressOf = (task: Task) => Math.min(100, Math.floor(((Date.now() - task.createdMs) / renderMs) * 100));
  const failed = (task: Task) => task.prompt.includes(FAIL_RENDER) && progressOf(task) >= 100;

  // Every create that reached the upstream counts, the ones it refused with a 500 included.
  const countCreate = (prompt: string) => creates.set(prompt, (creates.get(prompt) ?? 0) + 1);

  function createTask(api: Task['api'], model: string, prompt: string, seconds: string, size: string): Task {
    countCreate(prompt);
    const id =
      api === 'ark'
        ? `cgt-${Date.now()}-${randomBytes(3).toString('hex')}`
        : api === 'gemini'
          ? `models/${model}/operations/${randomBytes(6).toString('hex')}`
          : `video_${randomBytes(16).toString('hex')}`;
    const task: Task = { id, api, model, prompt, createdMs: Date.now(), seconds, size };
    tasks.set(id, task);
    return task;
  }

  function openaiVideo(task: Task): unknown {
    const progress = progressOf(task);
    const status = failed(task) ? 'failed' : progress >= 100 ? 'completed' : progress > 0 ? 'in_progress' : 'queued';
    const created = Math.floor(task.createdMs / 1000);
    return {
      id: task.id,
      object: 'video',
      model: task.model,
      status,
      progress,
      created_at: created,
      completed_at: status === 'completed' ? created + Math.ceil(renderMs / 1000) : null,
      expires_at: status === 'completed' ? created + 3600 : null,
      seconds: task.seconds,
      size: task.size,
      remixed_from_video_id: null,
      error: status === 'failed' ? { code: 'moderation_blocked', message: 'The render was blocked by the upstream' } : null,
    };
  }

  function arkTask(task: Task): unknown {
    const progress = progressOf(task);
    const status = failed(task) ? 'failed' : progress >= 100 ? 'succeeded' : progress > 0 ? 'running' : 'queued';
    const created = Math.floor(task.createdMs / 1000);
    return {
      id: task.id,
      model: task.model,
      status,
      ...(status === 'succeeded'
        ? {
            content: {
              video_url: `${url}/files/${task.id}.mp4`,
              ...(task.lastFrame ? { last_frame_url: `${url}/files/${task.id}-last.png` } : {}),
            },
          }
        : {}),
      ...(status === 'failed'
        ? { error: { code: 'OutputVideoSensitiveContentDetected', message: 'The render was blocked by the upstream' } }
        : {}),
      usage: status === 'succeeded' ? { completion_tokens: 108900, total_tokens: 108900 } : { completion_tokens: 0, total_tokens: 0 },
      created_at: created,
      updated_at: Math.floor(Date.now() / 1000),
      seed: 42,
      resolution: '720p',
      ratio: '16:9',
      duration: Number(task.seconds),
      framespersecond: 24,
    };
  }

  /** A Veo operation as the Gemini API answers it: `done` and, when finished, the video's file address. */
  function geminiOperation(task: Task): unknown {
    if (progressOf(task) < 100) return { name: task.id };
    if (failed(task)) return { name: task.id, done: true, error: { code: 3, message: 'The render was blocked by the upstream' } };
    const uri = `${url}/v1beta/files/${encodeURIComponent(task.id)}:download?alt=media`;
    return {
      name: task.id,
      done: true,
      response: {
        '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
        generateVideoResponse: { generatedSamples: [{ video: { uri } }] },
      },
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const bearer = req.headers.authorization === `Bearer ${apiKey}`;
    let match: RegExpMatchArray | null;

    if (req.method === 'POST' && path === '/v1/messages') {
      if (req.headers['x-api-key'] !== apiKey && !bearer) return anthropicError(res, 401, 'authentication_error', 'invalid x-api-key');
      const request = JSON.parse(body.toString('utf8')) as { model?: string; messages?: Array<{ content?: unknown }> };
      if (!request.model || !MODELS.has(request.model)) return anthropicError(res, 404, 'not_found_error', `model: ${request.model}`);
      const last = request.messages?.at(-1)?.content;
      const text = typeof last === 'string' ? last : JSON.stringify(last);
      return json(res, 200, {
        id: `msg_${randomBytes(12).toString('hex')}`,
        type: 'message',
        role: 'assistant',
        model: request.model,
        content: [{ type: 'text', text: enhanced(text) }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 9 },
      });
    }

    // The Gemini API (Veo): a create is a long-running operation; its video file takes the key too.
    if (path.startsWith('/v1beta/')) {
      const key = req.headers['x-goog-api-key'] ?? new URL(req.url ?? '/', 'http://upstream').searchParams.get('key');
      if (key !== apiKey) return geminiError(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
      if (req.method === 'POST' && (match = path.match(/^\/v1beta\/models\/([^/:]+):predictLongRunning$/))) {
        const model = match[1] ?? '';
        if (!MODELS.has(model)) return geminiError(res, 404, 'NOT_FOUND', `models/${model} is not found for API version v1beta`);
        const request = JSON.parse(body.toString('utf8')) as {
          instances?: Array<{ prompt?: string }>;
          parameters?: { durationSeconds?: number; aspectRatio?: string };
        };
        const prompt = request.instances?.[0]?.prompt ?? '';
        if (prompt.includes(FAIL_CREATE_500)) {
          countCreate(prompt);
          return geminiError(res, 500, 'INTERNAL', 'An internal error has occurred.');
        }
        const seconds = String(request.parameters?.durationSeconds ?? 8);
        const size = request.parameters?.aspectRatio === '9:16' ? '720x1280' : '1280x720';
        return json(res, 200, { name: createTask('gemini', model, prompt, seconds, size).id });
      }
      if (req.method === 'GET' && (match = path.match(/^\/v1beta\/files\/([^/]+):download$/))) {
        const task = tasks.get(decodeURIComponent(match[1] ?? ''));
        if (!task || task.api !== 'gemini' || progressOf(task) < 100) return geminiError(res, 404, 'NOT_FOUND', 'File not found.');
        return sendVideo(req, res, video);
      }
      if (req.method === 'GET' && (match = path.match(/^\/v1beta\/(models\/[^/]+\/operations\/[^/]+)$/))) {
        const task = tasks.get(match[1] ?? '');
        if (!task || task.api !== 'gemini') return geminiError(res, 404, 'NOT_FOUND', 'Operation not found.');
        return json(res, 200, geminiOperation(task));
      }
    }

    if (path === '/v1/videos' || path.startsWith('/v1/videos/')) {
      if (!bearer) return openaiError(res, 401, 'invalid_api_key', 'Incorrect API key provided');
      if (req.method === 'POST' && path === '/v1/videos') {
        const fields = await formOrJson(req, body);
        const model = fields.get('model') ?? '';
        if (!MODELS.has(model)) return openaiError(res, 404, 'model_not_found', `The model '${model}' does not exist`);
        const prompt = fields.get('prompt') ?? '';
        if (prompt.includes(FAIL_CREATE_500)) {
          countCreate(prompt);
          return openaiError(res, 500, 'server_error', 'The server had an error while processing your request');
        }
        return json(
          res,
          200,
          openaiVideo(createTask('openai', model, prompt, fields.get('seconds') ?? '4', fields.get('size') ?? '720x1280')),
        );
      }
      if (req.method === 'GET' && (match = path.match(/^\/v1\/videos\/([^/]+)(\/content)?$/))) {
        const task = tasks.get(match[1] ?? '');
        if (!task || task.api !== 'openai') return openaiError(res, 404, 'not_found', 'Video not found');
        if (!match[2]) return json(res, 200, openaiVideo(task));
        if (progressOf(task) < 100 || failed(task)) return openaiError(res, 400, 'invalid_request', 'Video is not ready');
        return sendVideo(req, res, video);
      }
    }

    if (path === '/api/v3/contents/generations/tasks' || path.startsWith('/api/v3/contents/generations/tasks/')) {
      if (!bearer) return arkError(res, 401, 'AuthenticationError', 'The API key in the request is missing or invalid.');
      if (req.method === 'POST' && path === '/api/v3/contents/generations/tasks') {
        const request = JSON.parse(body.toString('utf8')) as {
          model?: string;
          content?: Array<{ type?: string; text?: string }>;
          return_last_frame?: boolean;
        };
        const model = request.model ?? '';
        if (!MODELS.has(model))
          return arkError(
            res,
            404,
            'InvalidEndpointOrModel.NotFound',
            `The model or endpoint ${model} does not exist or you do not have access to it.`,
          );
        const prompt = request.content?.find((c) => c.type === 'text')?.text ?? '';
        if (prompt.includes(FAIL_CREATE_500)) {
          countCreate(prompt);
          return arkError(res, 500, 'InternalServiceError', 'The service encountered an unexpected internal error.');
        }
        const task = createTask('ark', model, prompt, '5', '1280x720');
        task.lastFrame = request.return_last_frame === true || prompt.includes(LAST_FRAME_ANYWAY);
        return json(res, 200, { id: task.id });
      }
      if (req.method === 'GET' && (match = path.match(/^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/))) {
        const task = tasks.get(match[1] ?? '');
        if (!task || task.api !== 'ark') return arkError(res, 404, 'ResourceNotFound', 'The specified task is not found.');
        return json(res, 200, arkTask(task));
      }
    }

    // A finished Ark task's last frame, on the same file host.
    if (req.method === 'GET' && (match = path.match(/^\/files\/([^/]+)-last\.png$/))) {
      const task = tasks.get(match[1] ?? '');
      if (!task?.lastFrame || progressOf(task) < 100) return sendText(res, 404, 'NoSuchKey');
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': LAST_FRAME_PNG.length });
      return void res.end(LAST_FRAME_PNG);
    }
    // The file host of finished Ark tasks: like a CDN's pre-signed address, it takes no key.
    if (req.method === 'GET' && (match = path.match(/^\/files\/([^/]+)\.mp4$/))) {
      const task = tasks.get(match[1] ?? '');
      if (!task || progressOf(task) < 100) return sendText(res, 404, 'NoSuchKey');
      return sendVideo(req, res, video);
    }
    return json(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: body.subarray(0, 4096).toString('utf8') });
      handle(req, res, body).catch((err: unknown) => {
        if (!res.headersSent) json(res, 500, { error: { message: `fake upstream: ${String(err)}`, type: 'server_error' } });
        else res.destroy();
      });
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveListen());
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    apiKey,
    video,
    requests,
    createsFor: (prompt) => creates.get(prompt) ?? 0,
    createCount: () => [...creates.values()].reduce((sum, n) => sum + n, 0),
    stop: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}

/** Fields of a multipart form (the OpenAI videos create) or of a JSON body, as strings. */
async function formOrJson(req: IncomingMessage, body: Buffer): Promise<Map<string, string>> {
  const type = req.headers['content-type'] ?? '';
  const fields = new Map<string, string>();
  if (type.startsWith('multipart/form-data')) {
    const form = await new Response(body, { headers: { 'content-type': type } }).formData();
    form.forEach((value, name) => {
      if (typeof value === 'string') fields.set(name, value);
    });
  } else {
    for (const [name, value] of Object.entries(JSON.parse(body.toString('utf8')) as Record<string, unknown>)) {
      if (typeof value === 'string' || typeof value === 'number') fields.set(name, String(value));
    }
  }
  return fields;
}

/** The MP4, honouring one `Range: bytes=a-b` (so tests can see whether a gateway passes Range on). */
function sendVideo(req: IncomingMessage, res: ServerResponse, video: Buffer): void {
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  if (range) {
    const start = Number(range[1]);
    const end = Math.min(range[2] ? Number(range[2]) : video.length - 1, video.length - 1);
    if (start > end) return sendText(res, 416, 'range not satisfiable');
    res.writeHead(206, {
      'content-type': 'video/mp4',
      'content-length': end - start + 1,
      'accept-ranges': 'bytes',
      'content-range': `bytes ${start}-${end}/${video.length}`,
    });
    res.end(video.subarray(start, end + 1));
    return;
  }
  res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length, 'accept-ranges': 'bytes' });
  res.end(video);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function openaiError(res: ServerResponse, status: number, code: string, message: string): void {
  json(res, status, { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code } });
}

function geminiError(res: ServerResponse, status: number, statusName: string, message: string): void {
  json(res, status, { error: { code: status, message, status: statusName } });
}

function arkError(res: ServerResponse, status: number, code: string, message: string): void {
  json(res, status, { error: { code, message, param: '', type: '' } });
}

function anthropicError(res: ServerResponse, status: number, type: string, message: string): void {
  json(res, status, { type: 'error', error: { type, message } });
}
