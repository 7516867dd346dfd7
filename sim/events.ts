// The simulator as the receiver of reelflow's job events (docs/notifications.md, docs/simulator.md):
// `POST /__sim/events/<name>` takes a webhook signed per Standard Webhooks with the secret the
// simulator was started with, checks it as any receiver should (signature, a timestamp within five
// minutes, the same webhook-id counted once), and keeps what came for `GET /__sim/events`. Written
// from the Standard Webhooks text, not from reelflow's sender, so it catches the sender's mistakes.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson } from './http';

const MAX_EVENT_BYTES = 64 * 1024;
const TOLERANCE_S = 5 * 60;
const KEPT = 200;
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface ReceivedEvent {
  name: string;
  webhookId: string;
  type: string;
  outcome?: string;
  job?: string;
  /** How many times this webhook-id came (a retry after a lost answer comes again). */
  deliveries: number;
  receivedAt: string;
}

export class EventInbox {
  private readonly events = new Map<string, ReceivedEvent>();

  constructor(private readonly secret: string | undefined) {}

  list(): ReceivedEvent[] {
    return [...this.events.values()];
  }

  async receive(req: IncomingMessage, res: ServerResponse, name: string): Promise<void> {
    if (!this.secret) {
      req.resume();
      return sendJson(res, 404, { error: 'job events: start the simulator with an event secret ($REELFLOW_SIM_EVENT_SECRET=whsec_...)' });
    }
    if (!NAME.test(name)) {
      req.resume();
      return sendJson(res, 400, { error: 'the event receiver name is letters, digits, - and _' });
    }
    let body: string;
    try {
      body = (await readBody(req, MAX_EVENT_BYTES)).toString('utf8');
    } catch (e) {
      return sendJson(res, 413, { error: (e as Error).message });
    }
    const problem = this.unverified(req, body);
    if (problem) return sendJson(res, 401, { error: problem });
    const id = String(req.headers['webhook-id']);
    const seen = this.events.get(id);
    if (seen) {
      seen.deliveries += 1;
      return sendJson(res, 200, { duplicate: true });
    }
    let event: { type?: unknown; data?: { outcome?: unknown; job?: unknown } };
    try {
      event = JSON.parse(body) as typeof event;
    } catch {
      return sendJson(res, 400, { error: 'the event body is not JSON' });
    }
    if (this.events.size >= KEPT) this.events.delete(this.events.keys().next().value as string);
    this.events.set(id, {
      name,
      webhookId: id,
      type: String(event.type),
      ...(typeof event.data?.outcome === 'string' ? { outcome: event.data.outcome } : {}),
      ...(typeof event.data?.job === 'string' ? { job: event.data.job } : {}),
      deliveries: 1,
      receivedAt: new Date().toISOString(),
    });
    return sendJson(res, 200, { received: id });
  }

  /** Why the request is not a signed event of ours, or undefined. */
  private unverified(req: IncomingMessage, body: string): string | undefined {
    const id = req.headers['webhook-id'];
    const timestamp = req.headers['webhook-timestamp'];
    const signatures = req.headers['webhook-signature'];
    if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string')
      return 'missing webhook-id, webhook-timestamp or webhook-signature';
    const seconds = Number(timestamp);
    if (!Number.isInteger(seconds) || Math.abs(Date.now() / 1000 - seconds) > TOLERANCE_S)
      return 'webhook-timestamp is not within five minutes';
    const key = Buffer.from(this.secret!.replace(/^whsec_/, ''), 'base64');
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
    const matches = signatures.split(' ').some((s) => {
      const [version, value] = s.split(',');
      const given = Buffer.from(value ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
    return matches ? undefined : 'webhook-signature does not match';
  }
}
