// A finished call leaves no timer behind. Each call's whole-exchange deadline used to be
// AbortSignal.timeout, whose timer cannot be cleared: it stayed pending for its full span (2 x the
// request timeout, 120 s by default) after the call, holding the async context it was made in (in
// a worker, the activity with its input, logger and metrics) until a full garbage collection
// found its signal dead. A heap snapshot of the 30,000-item memory bench found ~3,000 finished
// activities kept so (docs/worker-memory.md, "Finished calls"). The simulator over real HTTP; the
// timers are counted with async_hooks as they are made and cleared. Only timers the gateway client
// makes count: the simulator, in this process, runs ffmpeg with a 120 s kill timer of its own,
// which a loaded machine (CI) still had running at the end.
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { join, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exchangeTimeoutMs } from '../../../gateway/budget';
import { harness, render, waitDone, type Harness } from './helpers';

/** A call's whole-exchange deadline at the default request timeout (connections' own timers are shorter). */
const DEADLINE_MS = exchangeTimeoutMs(60_000);
/** The client's own code (its deadline or, in the old code, AbortSignal.timeout in retry.ts). */
const CLIENT_CODE = join(__dirname, '..', '..', '..', 'gateway') + sep;

/** Whether the code making a timer now is the gateway client's. */
function madeByClient(): boolean {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  try {
    return new Error().stack?.includes(CLIENT_CODE) ?? false;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

describe('finished gateway calls', () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(async () => h.close());

  it('leave no deadline timer pending (create, status checks, Messages)', async () => {
    const pending = new Map<number, number>();
    const hook = createHook({
      init(id, type, _trigger, resource) {
        const ms = (resource as { _idleTimeout?: number })._idleTimeout;
        if (type === 'Timeout' && typeof ms === 'number' && ms >= DEADLINE_MS && madeByClient()) pending.set(id, ms);
      },
      destroy(id) {
        pending.delete(id);
      },
    });
    hook.enable();
    let calls = 0;
    try {
      for (let i = 0; i < 3; i++) {
        const created = await h.client.createTask(render(`finished call ${i}`));
        await waitDone(h.client, { taskId: created.taskId, protocol: 'general' });
        await h.client.createMessage({ model: 'claude-haiku-4-5', maxTokens: 50, prompt: `rewrite ${i}` });
        calls += 3;
      }
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      hook.disable();
    }
    assert.deepEqual([...pending.values()], [], `after ${calls}+ calls, deadline timers still pending (the old code left one per call)`);
  });
});
