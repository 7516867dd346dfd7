import type { IncomingMessage } from 'node:http';
import type { SimContext } from './context';
import type { Task } from './tasks';

/**
 * What every create does once its request is valid, whichever protocol it came by: store the task,
 * count it, get its video ready, and maybe lose the answer. Returns undefined when the answer is
 * lost: the task exists and will render (it was billed), but the caller never learns its id.
 */
export function acceptCreate(
  ctx: SimContext,
  req: IncomingMessage,
  fields: Omit<Task, 'id' | 'failReason'>,
  id?: string,
): Task | undefined {
  const chosen = ctx.faults.faults.failPrompts?.some((p) => fields.prompt.includes(p)) ?? false;
  const task = ctx.store.create(fields, chosen ? 1 : ctx.faults.faults.failRate, id);
  ctx.stats.create(fields.prompt, task, seedOf(fields.metadata));
  ctx.stats.content(fields.prompt, fields.metadata?.['content']);
  ctx.videos.prepare(task);
  // The provider calls back whether or not the client heard the create's answer.
  ctx.callbacks?.schedule(task);
  if (ctx.faults.lostCreate()) {
    ctx.stats.lostCreate(fields.prompt);
    req.socket.resetAndDestroy();
    return undefined;
  }
  return task;
}

/**
 * The seed a create carried (general: metadata.seed, a number; videos: a `seed` form field, text
 * the gateway passes on as metadata), so tests can see what each take sent (docs/simulator.md).
 */
function seedOf(metadata: Record<string, unknown> | undefined): number | undefined {
  const seed = metadata?.['seed'];
  if (typeof seed === 'number' && Number.isInteger(seed)) return seed;
  if (typeof seed === 'string' && /^-?\d{1,15}$/.test(seed)) return Number(seed);
  return undefined;
}
