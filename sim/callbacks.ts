// Provider callbacks (docs/simulator.md, docs/callbacks.md): a create whose metadata carries a
// `callback_url` is called back as Seedance (Volcengine Ark) calls back through new-api: a POST of
// the task as the provider knows it, under the provider's own id (`cgt-...`), never the gateway's,
// once when it starts running and once when it ends. Faults (SimFaultsExt.callback*) lose, delay,
// repeat, reorder or forge them, each drawn from its own seeded stream.
import type { SimContext } from './context';
import type { Task } from './tasks';

/** Share of the render before IN_PROGRESS (tasks.ts, QUEUED_END): when the `running` callback goes. */
const RUNNING_AT = 0.2;
/** Default delay of a late callback past the task's end. */
const LATE_MS = 2_000;
/** Copies of a duplicated callback. */
const DUPLICATES = 3;
const SEND_TIMEOUT_MS = 5_000;

type ArkStatus = 'running' | 'succeeded' | 'failed';

export class CallbackSender {
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly ctx: SimContext) {}

  /** Plans the task's callbacks when its create carried an address; decisions are made now, in create order. */
  schedule(task: Task): void {
    const address = task.metadata?.['callback_url'];
    if (typeof address !== 'string' || !/^https?:\/\//.test(address)) return;
    const { ctx } = this;
    const f = ctx.faults.faults;
    const providerId = this.providerId(task);
    const end = task.createdAt + task.renderMs;
    const final: ArkStatus = task.failReason ? 'failed' : 'succeeded';
    const running = () => this.send(task, providerId, address, 'running', 'running');
    const ending = () => this.send(task, providerId, address, final, 'final');
    if (ctx.dice.chance('callback-forged', f.callbackForgedRate)) {
      // Someone who saw the address's form, not its token: claims the render ended, half-way through.
      this.at(task.createdAt + task.renderMs / 2, () => this.send(task, providerId, forged(address), 'succeeded', 'forged'));
    }
    if (ctx.dice.chance('callback-lost', f.callbackLostRate)) {
      ctx.stats.callback('lost');
      this.at(task.createdAt + task.renderMs * RUNNING_AT, running);
      return;
    }
    const late = ctx.dice.chance('callback-late', f.callbackLateRate) ? (f.callbackLateMs ?? LATE_MS) : 0;
    if (late > 0) ctx.stats.callback('late');
    const copies = ctx.dice.chance('callback-duplicate', f.callbackDuplicateRate) ? DUPLICATES : 1;
    if (copies > 1) ctx.stats.callback('duplicated');
    if (ctx.dice.chance('callback-out-of-order', f.callbackOutOfOrderRate)) {
      // The `running` callback overtaken by the final one: it comes after, saying the task runs.
      ctx.stats.callback('out-of-order');
      this.at(end + late, ending);
      this.at(end + late + 50, running);
    } else {
      this.at(task.createdAt + task.renderMs * RUNNING_AT, running);
      for (let i = 0; i < copies; i++) this.at(end + late + i * 20, ending);
    }
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** The provider's id, as Ark spells them: `cgt-` and the creation time, then a random tail. */
  private providerId(task: Task): string {
    const stamp = new Date(task.createdAt).toISOString().replace(/\D/g, '').slice(0, 14);
    let tail = '';
    for (let i = 0; i < 5; i++) tail += 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(this.ctx.dice.next('callback-id') * 36)];
    return `cgt-${stamp}-${tail}`;
  }

  private at(when: number, send: () => Promise<void>): void {
    if (this.closed) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        void send();
      },
      Math.max(0, when - this.ctx.now()),
    );
    timer.unref();
    this.timers.add(timer);
  }

  private async send(task: Task, providerId: string, address: string, status: ArkStatus, what: string): Promise<void> {
    if (this.closed) return;
    const { stats } = this.ctx;
    stats.callback(`sent-${what}`);
    try {
      const response = await fetch(address, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(arkTask(task, providerId, status)),
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      });
      await response.arrayBuffer().catch(() => undefined);
      stats.callbackAnswered(what, response.status);
    } catch {
      stats.callback('answer-none');
    }
  }
}

/** The address with its last character changed: a token no worker minted. */
function forged(address: string): string {
  const last = address.slice(-1);
  return address.slice(0, -1) + (last === 'A' ? 'B' : 'A');
}

/** The body of an Ark content-generation callback: the task as the provider reports it. */
function arkTask(task: Task, providerId: string, status: ArkStatus): Record<string, unknown> {
  const seconds = Math.floor(task.createdAt / 1000);
  return {
    id: providerId,
    model: task.model,
    status,
    // The provider's own storage, which reelflow never fetches: the gateway's answer names the video.
    ...(status === 'succeeded' ? { content: { video_url: `https://ark-content-generation.invalid/${providerId}.mp4` } } : {}),
    ...(status === 'failed' ? { error: { code: 'InternalServiceError', message: task.failReason ?? 'failed' } } : {}),
    usage: status === 'succeeded' ? { completion_tokens: 108_900, total_tokens: 108_900 } : undefined,
    created_at: seconds,
    updated_at: Math.floor(Date.now() / 1000),
    seed: typeof task.metadata?.['seed'] === 'number' ? task.metadata['seed'] : 42,
    resolution: typeof task.metadata?.['resolution'] === 'string' ? task.metadata['resolution'] : '720p',
    duration: task.seconds,
    framespersecond: 24,
  };
}
