// One job event to one target, as its receiver expects it (docs/notifications.md): a generic webhook
// signed per Standard Webhooks, a Slack incoming webhook, an ntfy topic. Every request is bounded
// (body, answer, 10 s); an address or secret never appears in what this returns or throws, because
// a Slack or ntfy address is itself the credential and errors travel into workflow history.
import { createHmac } from 'node:crypto';
import { redact } from '../gateway/redact';
import type { NotifyTarget } from '../jobfile/notify-settings';
import type { JobOutcome } from '../domain/end-states';
import type { JobEvent } from './notify-event';

/** One request's deadline: a receiver that takes longer is retried (Standard Webhooks suggests 15 s at most). */
export const SEND_TIMEOUT_MS = 10_000;
/** The largest event body sent; events are small (causes are bounded), this only guards. */
export const MAX_BODY_BYTES = 64 * 1024;
/** How much of a receiver's answer is kept, for `notify test` and the last error. */
const MAX_ANSWER_CHARS = 500;

export interface SendRequest {
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

export interface SendAnswer {
  status: number;
  /** The receiver's answer, bounded, control characters removed, secrets redacted. */
  body: string;
}

/** A delivery attempt that did not reach a 2xx: safe to show (no address, no secret). */
export class DeliveryError extends Error {
  override name = 'DeliveryError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** `v1,<base64 HMAC-SHA256 of id.timestamp.body>` keyed by the base64 part after `whsec_` (Standard Webhooks). */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The request for `target`. `secret`: the webhook's whsec_ value (read from the worker's environment). */
export function buildRequest(
  target: NotifyTarget,
  event: JobEvent,
  webhookId: string,
  secret: string | undefined,
  nowMs: number,
): SendRequest {
  if (target.kind === 'slack') return json(slackMessage(event));
  if (target.kind === 'ntfy') return ntfyRequest(event);
  const body = JSON.stringify(event);
  const timestamp = Math.floor(nowMs / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
  };
  if (secret !== undefined) headers['webhook-signature'] = webhookSignature(secret, webhookId, timestamp, body);
  return { method: 'POST', headers, body };
}

function json(value: unknown): SendRequest {
  return { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) };
}

const OUTCOME_WORDS: Record<JobOutcome, string> = {
  succeeded: 'succeeded',
  partial: 'ended with some items failed',
  failed: 'failed',
  budget_reached: 'stopped at its budget',
  stopped: 'stopped',
  canceled: 'was canceled',
};

/** `job ended: 3 succeeded, 1 failed`; the headline every target shows. */
export function headline(event: JobEvent): string {
  const { data } = event;
  if (event.type === 'job.started') return `${data.job} started`;
  if (event.type === 'item.failed') return `${data.job}: item ${data.item?.key ?? '?'} ${data.item?.state ?? 'failed'}`;
  return `${data.job} ${OUTCOME_WORDS[data.outcome ?? 'succeeded']}`;
}

/** `3 succeeded, 1 failed` (states with a count only). */
export function countsText(counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state.replace('_', ' ')}`);
  return parts.length ? parts.join(', ') : 'no items ended';
}

function detailLines(event: JobEvent): string[] {
  const { data } = event;
  const lines = [`items: ${countsText(data.counts)}`];
  if (data.spend_usd !== null) lines.push(`spent: $${data.spend_usd.toFixed(2)}`);
  lines.push(`files: ${data.output}`);
  if (data.cause) lines.push(`cause: ${data.cause}`);
  lines.push(`workflow: ${data.workflow_id}`);
  return lines;
}

/** Slack's mrkdwn gives &, < and > a meaning (links, mentions): job-provided text is escaped. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An incoming-webhook message: `text` for notifications, blocks for the channel. */
export function slackMessage(event: JobEvent): { text: string; blocks: unknown[] } {
  const title = slackEscape(headline(event));
  const fields = detailLines(event).map((line) => {
    const [label, ...rest] = line.split(': ');
    return { type: 'mrkdwn', text: `*${slackEscape(label ?? '')}*\n${slackEscape(rest.join(': '))}` };
  });
  return {
    text: `${title} (${slackEscape(countsText(event.data.counts))})`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: headline(event).slice(0, 150) } },
      // A section holds at most 10 fields.
      { type: 'section', fields: fields.slice(0, 10) },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `reelflow ${slackEscape(event.type)} · ${slackEscape(event.timestamp)}` }] },
    ],
  };
}

const NTFY_PRIORITY: Record<JobOutcome, string> = {
  succeeded: 'default',
  partial: 'default',
  failed: 'high',
  budget_reached: 'high',
  stopped: 'high',
  canceled: 'low',
};

/** Headers are ASCII: anything else in a job-provided title is replaced, not sent raw. */
function headerText(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
}

/** ntfy's publish: the body is the message, headers carry title, priority, tags and the click link. */
export function ntfyRequest(event: JobEvent): SendRequest {
  const outcome = event.data.outcome;
  const priority = event.type === 'item.failed' ? 'default' : event.type === 'job.started' ? 'low' : NTFY_PRIORITY[outcome ?? 'succeeded'];
  const tags =
    event.type === 'job.ended'
      ? outcome === 'succeeded'
        ? 'white_check_mark'
        : outcome === 'canceled'
          ? 'no_entry'
          : 'warning'
      : 'movie_camera';
  const headers: Record<string, string> = {
    'content-type': 'text/plain; charset=utf-8',
    title: headerText(headline(event)),
    priority,
    tags: `${tags},reelflow`,
  };
  const click = clickLink(event.data.output);
  if (click) headers.click = click;
  return { method: 'POST', headers, body: `${detailLines(event).join('\n')}\n` };
}

/** Where a tap leads: the output as a URL (an S3 location stays as it is, a local folder becomes file://). */
function clickLink(output: string): string | undefined {
  if (/^(s3|https?):\/\//.test(output)) return headerText(output);
  if (output.startsWith('/')) return headerText(`file://${encodeURI(output)}`);
  return undefined;
}

/**
 * Sends one request; a 2xx is delivered, anything else throws a DeliveryError whose message names
 * the target and the answer, never the address (`secrets` are redacted from all of it).
 */
export async function send(target: NotifyTarget, request: SendRequest, secrets: readonly string[]): Promise<SendAnswer> {
  const hide = [target.url, ...addressSecrets(target.url), ...secrets];
  if (Buffer.byteLength(request.body) > MAX_BODY_BYTES)
    throw new DeliveryError(`${target.name}: the event is over ${MAX_BODY_BYTES} bytes`);
  let response: Response;
  try {
    response = await fetch(target.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      // A signed event goes where the user said, never where a redirect points.
      redirect: 'manual',
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${SEND_TIMEOUT_MS / 1000} s`
        : (cause?.code ?? cause?.message ?? (error as Error).message);
    throw new DeliveryError(redact(`${target.name} (${target.kind} at ${hostOf(target.url)}): ${reason}`, hide));
  }
  const body = await boundedText(response);
  const answer = { status: response.status, body: redact(body, hide) };
  if (response.status >= 200 && response.status < 300) return answer;
  throw new DeliveryError(
    `${target.name} (${target.kind} at ${hostOf(target.url)}) answered ${response.status}${answer.body ? `: ${answer.body}` : ''}`,
    response.status,
  );
}

/** The parts of an address that may be its credential: its path and query (a receiver may echo them). */
function addressSecrets(url: string): string[] {
  try {
    const { pathname, search } = new URL(url);
    return [`${pathname}${search}`, pathname].filter((part) => part.length > 1);
  } catch {
    return [];
  }
}

/** The host only: the path of a Slack or ntfy address is its secret. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an invalid address';
  }
}

async function boundedText(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    while (size < MAX_ANSWER_CHARS * 4) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(Buffer.from(value));
      size += value.byteLength;
    }
  } catch {
    // The status is what matters; a body cut short is shown as far as it came.
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  return (
    Buffer.concat(chunks)
      .toString('utf8')
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u001f\u007f]+/g, ' ')
      .trim()
      .slice(0, MAX_ANSWER_CHARS)
  );
}
