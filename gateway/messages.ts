// Messages endpoint (docs/protocol.md §5): exactly the headers reelflow promises, and a reader for the answer.
import type { MessageResult, ServedBy } from './contract';
import { gatewayText } from './redact';

/** Characters of a message's text that are kept: far above any prompt rewrite. */
const MAX_MESSAGE_TEXT = 20_000;

export const MESSAGES_PATH = '/v1/messages';
export const ANTHROPIC_VERSION = '2023-06-01';

export interface MessageInput {
  model: string;
  maxTokens: number;
  system?: string;
  prompt: string;
}

/** Besides the key, which the engine sends as `x-api-key` (and as nothing else). */
export const MESSAGES_HEADERS: Readonly<Record<string, string>> = {
  'anthropic-version': ANTHROPIC_VERSION,
  'content-type': 'application/json',
};

export function buildMessagesBody(input: MessageInput): string {
  const body: Record<string, unknown> = {
    model: input.model,
    max_tokens: input.maxTokens,
    messages: [{ role: 'user', content: input.prompt }],
  };
  if (input.system !== undefined) body.system = input.system;
  return JSON.stringify(body);
}

export type ParsedMessage = Omit<MessageResult, keyof ServedBy>;

/** Joins the text blocks of a Messages response; undefined when the body is not a message. */
export function parseMessageBody(body: unknown, requestedModel: string): ParsedMessage | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  if (!Array.isArray(b.content)) return undefined;
  const text = b.content
    .filter(
      (c): c is { type: 'text'; text: string } =>
        !!c && typeof c === 'object' && (c as { type?: unknown }).type === 'text' && typeof (c as { text?: unknown }).text === 'string',
    )
    .map((c) => c.text)
    .join('')
    // A rewritten prompt becomes a request and travels in history: bounded whatever the gateway sends.
    .slice(0, MAX_MESSAGE_TEXT);
  const model = typeof b.model === 'string' && b.model ? gatewayText(b.model, 200) : requestedModel;
  const out: ParsedMessage = { text, model };
  if (typeof b.stop_reason === 'string') out.stopReason = b.stop_reason;
  const usage = b.usage as Record<string, unknown> | undefined;
  if (usage && typeof usage === 'object') {
    const u: { inputTokens?: number; outputTokens?: number } = {};
    if (typeof usage.input_tokens === 'number') u.inputTokens = usage.input_tokens;
    if (typeof usage.output_tokens === 'number') u.outputTokens = usage.output_tokens;
    out.usage = u;
  }
  return out;
}
