// LiteLLM proxy 1.106's error bodies, verbatim in form from test/gateways/OBSERVED.md. Its own errors
// are `{"error":{"message","type","param":null,"code":"<HTTP status>"}}`; an upstream's error is
// carried as JSON text inside `message`, after `litellm.<Kind>Error: <Provider>Exception - ` and
// before "\n\nLiteLLM: model group '…' failed …".
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson } from './http';

function litellmError(status: number, message: string, type: string, extra: Record<string, unknown> = {}): unknown {
  return { error: { message, type, param: null, code: String(status), ...extra } };
}

export type LitellmKind =
  'BadRequestError' | 'NotFoundError' | 'InternalServerError' | 'RateLimitError' | 'ServiceUnavailableError' | 'Timeout';

/** An upstream (OpenAI-shaped) error as LiteLLM passes it on: its JSON inside LiteLLM's message. */
export function wrappedUpstreamError(
  status: number,
  kind: LitellmKind,
  upstream: { message: string; type?: string; code?: string | null },
  modelGroup: string | undefined,
): unknown {
  const inner = JSON.stringify({
    error: { message: upstream.message, type: upstream.type ?? 'invalid_request_error', param: null, code: upstream.code ?? null },
  });
  // Server-side kinds repeat the kind, as LiteLLM does: "litellm.InternalServerError: InternalServerError: OpenAIException - …".
  const head = status >= 500 ? `litellm.${kind}: ${kind}: OpenAIException - ` : `litellm.${kind}: OpenAIException - `;
  const tail =
    modelGroup === undefined ? '' : `\n\nLiteLLM: model group '${modelGroup}' failed with the error above. No fallback was attempted.`;
  const type = status === 429 ? 'throttling_error' : status >= 500 ? 'internal_server_error' : 'invalid_request_error';
  return litellmError(status, `${head}${inner}${tail}`, type);
}

/** A video id LiteLLM cannot route (undecodable, or with an empty model_id) goes to OpenAI's public address. */
export function sendUnroutable(res: ServerResponse): void {
  sendJson(
    res,
    500,
    litellmError(
      500,
      'litellm.InternalServerError: InternalServerError: OpenAIException - Cannot connect to host api.openai.com:443 ' +
        'ssl:<ssl.SSLContext object at 0x7fcf1c2b3d40> [Name or service not known]',
      'internal_server_error',
    ),
  );
}

/** A wrong key: without a database 400 no_db_connection; with one 401, naming the key's last 4 characters and its hash. */
export function litellmKeyRefused(res: ServerResponse, key: string, database: boolean): void {
  if (!database) return sendJson(res, 400, litellmError(400, 'No connected db.', 'no_db_connection'));
  const hash = createHash('sha256').update(key).digest('hex');
  sendJson(res, 401, {
    error: {
      message:
        `Authentication Error, Invalid proxy server token passed. Received API Key = sk-...${key.slice(-4)}, ` +
        `Key Hash (Token) =${hash}. Unable to find token in cache or \`LiteLLM_VerificationTokenTable\``,
      type: 'token_not_found_in_db',
      param: 'key',
      code: '401',
    },
  });
}

/** A model not in LiteLLM's model list: 400 before anything reaches an upstream. */
export function litellmUnknownModel(res: ServerResponse, model: string, route: 'video' | 'messages'): void {
  if (route === 'messages') {
    const message = `anthropic_messages: Invalid model name passed in model=${model}. Call \`/v1/models\` to view available models for your key.`;
    return sendJson(res, 400, {
      type: 'error',
      error: { type: 'invalid_request_error', message, provider_specific_fields: { error: message } },
    });
  }
  const message = `/videos: Invalid model name passed in model=${model}. Call \`/v1/models\` to view available models for your key.`;
  sendJson(res, 400, litellmError(400, message, 'invalid_request_error', { provider_specific_fields: { error: message } }));
}

/** FastAPI's answer for a path no route serves. */
export function sendNotFound(res: ServerResponse): void {
  sendJson(res, 404, { detail: 'Not Found' });
}
