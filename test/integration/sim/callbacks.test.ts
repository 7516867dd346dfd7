// The simulator's provider callbacks (sim/callbacks.ts, docs/callbacks.md): a create whose metadata
// carries callback_url is called back as Seedance calls back through new-api, under the provider's
// own id, with its faults. A real receiver on loopback records what arrives.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { SimFaultsExt } from '../../../sim/index';
import { JSON_AUTH, withSim } from './helpers';

interface Received {
  path: string;
  at: number;
  body: { id: string; status: string; content?: { video_url: string } };
}

const RENDER_MS = 400;

describe('simulator callbacks', () => {
  let receiver: Server;
  let base = '';
  const received: Received[] = [];
  before(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          path: req.url ?? '',
          at: Date.now(),
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received['body'],
        });
        res.writeHead(req.url?.endsWith('tokenA') ? 200 : 401).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => receiver.close(() => r())));

  /** One create with its own callback address under `faults`; what its address received once it settled. */
  async function oneTask(faults: SimFaultsExt, name: string, settleMs = RENDER_MS + 600) {
    return withSim({ renderMs: RENDER_MS, seed: 3, faults }, async (sim) => {
      const created = (await (
        await fetch(`${sim.urls[0]!}/v1/video/generations`, {
          method: 'POST',
          headers: JSON_AUTH,
          body: JSON.stringify({ model: 'seedance-1-0-pro-250528', prompt: name, metadata: { callback_url: `${base}/${name}/tokenA` } }),
        })
      ).json()) as { id: string; created_at: number };
      const createdAt = Date.now();
      await new Promise((r) => setTimeout(r, settleMs));
      const mine = received.filter((r) => r.path.startsWith(`/${name}/`));
      return { taskId: created.id, createdAt, mine, stats: sim.stats() };
    });
  }

  it("calls back when the task runs and when it ends, with Ark's body under the provider's own id", async () => {
    const { taskId, mine, stats } = await oneTask({}, 'plain');
    assert.deepEqual(
      mine.map((r) => r.body.status),
      ['running', 'succeeded'],
    );
    for (const r of mine) {
      assert.match(r.body.id, /^cgt-\d{14}-[a-z0-9]{5}$/);
      assert.notEqual(r.body.id, taskId);
    }
    assert.ok(mine[1]!.body.content?.video_url);
    assert.deepEqual(stats.callbackAnswers, { 'running 200': 1, 'final 200': 1 });
  });

  it('faults: lost, late, duplicated, out of order, forged', async () => {
    const lost = await oneTask({ callbackLostRate: 1 }, 'lost');
    assert.deepEqual(
      lost.mine.map((r) => r.body.status),
      ['running'],
    );
    assert.equal(lost.stats.callbacks['lost'], 1);

    const late = await oneTask({ callbackLateRate: 1, callbackLateMs: 700 }, 'late', RENDER_MS + 1_300);
    const final = late.mine.find((r) => r.body.status === 'succeeded');
    assert.ok(final && final.at - late.createdAt >= RENDER_MS + 650, 'the final callback came late');

    const twice = await oneTask({ callbackDuplicateRate: 1 }, 'duplicated');
    assert.deepEqual(
      twice.mine.map((r) => r.body.status),
      ['running', 'succeeded', 'succeeded', 'succeeded'],
    );
    assert.equal(new Set(twice.mine.map((r) => r.body.id)).size, 1, 'copies of one callback');

    const reordered = await oneTask({ callbackOutOfOrderRate: 1 }, 'reordered');
    assert.deepEqual(
      reordered.mine.map((r) => r.body.status),
      ['succeeded', 'running'],
    );

    const forged = await oneTask({ callbackForgedRate: 1 }, 'forged');
    const wrong = forged.mine.filter((r) => !r.path.endsWith('tokenA'));
    assert.equal(wrong.length, 1);
    assert.equal(wrong[0]!.body.status, 'succeeded', 'a forged callback claims success');
    assert.ok(wrong[0]!.at - forged.createdAt < RENDER_MS, 'before the render ended');
    assert.equal(forged.stats.callbackAnswers['forged 401'], 1);
  });
});
