// POST /v1/messages: the Messages protocol, plain JSON or server-sent events. Accepts the key as
// x-api-key (0.x SDKs, reelflow) or Authorization: Bearer (1.x SDK, desktop clients); any
// anthropic-version date passes, a missing one is a 400 (LiteLLM passes it, and sends its own upstream).
import type { ServerResponse } from 'node:http';
import type { RouteCall } from './context';
import { anthropicError, bearerToken, requestId, sendJson } from './http';
import { checkKey, requireModel } from './catalog';

const BLOCK_TYPES = new Set(['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']);
const invalid = (message: string): unknown => anthropicError('invalid_request_error', message);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Returns the concatenated text of the messages, or an error message. */
function checkMessages(messages: unknown): { text: string; last: string } | string {
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  let text = '';
  let last = '';
  for (const [i, m] of messages.entries()) {
    if (!isObject(m)) return `messages.${i}: must be an object`;
    if (m['role'] !== 'user' && m['role'] !== 'assistant') {
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    }
    const c = m['content'];
    let t = '';
    if (typeof c === 'string') t = c;
    else if (Array.isArray(c)) {
      for (const [j, b] of c.entries()) {
        if (!isObject(b) || typeof b['type'] !== 'string' || !BLOCK_TYPES.has(b['type'])) {
          return `messages.${i}.content.${j}.type: unknown content block type ${JSON.stringify(isObject(b) ? b['type'] : b)}`;
        }
        if (b['type'] === 'text') {
          if (typeof b['text'] !== 'string') return `messages.${i}.content.${j}.text: Field required`;
          t += b['text'];
        }
      }
    } else return `messages.${i}.content: Input should be a valid string or list of content blocks`;
    text += t;
    if (m['role'] === 'user') last = t;
  }
  return { text, last };
}

/** A deterministic "enhanced prompt": the last user text with film-language additions. */
export function replyFor(last: string): string {
  const base = last.trim().replace(/[.\s]+$/, '') || 'A quiet establishing shot';
  return `${base}. Cinematic lighting, shallow depth of field, slow dolly-in, 35mm film grain, natural colour grade.`;
}

const tokens = (s: string): number => Math.max(1, Math.ceil(s.length / 4));

/** The `usage` an answer reports: a token per 4 characters of the messages and system text, and of the reply. */
export function messageUsage(
  messagesText: string,
  system: string | undefined,
  reply: string,
): { input_tokens: number; output_tokens: number } {
  return { input_tokens: tokens(messagesText + (system ?? '')), output_tokens: tokens(reply) };
}

function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export function messages({ req, res, ctx, body }: RouteCall): void {
  const xKey = req.headers['x-api-key'];
  const bearer = bearerToken(req);
  const version = req.headers['anthropic-version'];
  ctx.stats.messages(
    typeof xKey === 'string' ? 'x-api-key' : bearer ? 'bearer' : 'none',
    typeof version === 'string' ? version : undefined,
  );
  if (!checkKey(ctx, req, res, true)) return;
  if ((typeof version !== 'string' || version === '') && ctx.cfg.profile !== 'litellm') {
    return sendJson(res, 400, invalid('anthropic-version: header is required'));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (e) {
    return sendJson(res, 400, invalid(`There was an error parsing the body: ${(e as Error).message}`));
  }
  if (!isObject(parsed)) return sendJson(res, 400, invalid('request body must be a JSON object'));
  const { model, max_tokens: maxTokens, system, stream } = parsed;
  if (typeof model !== 'string' || model === '') return sendJson(res, 400, invalid('model: Field required'));
  const info = requireModel(ctx, res, model, 'messages');
  if (!info) return;
  if (info.kind !== 'messages') return sendJson(res, 400, invalid(`model ${model} does not support the Messages API`));
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    return sendJson(res, 400, invalid('max_tokens: Input should be a positive integer'));
  }
  if (system !== undefined && typeof system !== 'string' && !Array.isArray(system)) {
    return sendJson(res, 400, invalid('system: Input should be a valid string or list of text blocks'));
  }
  if (stream !== undefined && typeof stream !== 'boolean') return sendJson(res, 400, invalid('stream: Input should be a valid boolean'));
  const checked = checkMessages(parsed['messages']);
  if (typeof checked === 'string') return sendJson(res, 400, invalid(checked));

  let text = replyFor(checked.last);
  let stopReason = 'end_turn';
  if (tokens(text) > maxTokens) {
    text = text.slice(0, maxTokens * 4);
    stopReason = 'max_tokens';
  }
  const id = `msg_sim${requestId()}`;
  const usage = messageUsage(checked.text, typeof system === 'string' ? system : undefined, text);
  const headers = { 'request-id': `req_${requestId()}` };
  if (!stream) {
    return sendJson(
      res,
      200,
      {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text }],
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      },
      headers,
    );
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
  sse(res, 'message_start', {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
    },
  });
  sse(res, 'ping', { type: 'ping' });
  if (ctx.faults.streamError()) {
    // After a 200 the only way to report trouble is an error event; clients must not treat it as success.
    ctx.stats.fault('stream-error');
    sse(res, 'error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    res.end();
    return;
  }
  sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  // Word-sized deltas, like a real stream; the concatenation is exactly the plain answer's text.
  for (const piece of text.match(/\S+\s*/g) ?? [text]) {
    sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } });
  }
  sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  sse(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}
