// Throughput: 2,000 items, instant renders, 1 MiB videos, max_in_flight 100: items/s sustained
// (the 10 %..90 % completions), through Temporal and the worker process. Baseline, same run, same
// simulator: a plain Promise pool of the same concurrency calling the simulator directly (create,
// poll, download to disk; no durability).
// Then the same job again with a price and a budget (docs/costs.md, "Budget"): every item's create reserves its
// estimate in the job workflow first, so the ratio of the two rates is what the budget costs.
//   npx tsx bench/throughput.ts [--items 2000] [--concurrency 100] [--video-bytes 1048576] [--budget 1]
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { emit, fail, intFlags, machineLine, say, seconds } from './lib/report';
import { BENCH_KEY, items, runJob, sleep, startStack, type Stack } from './lib/stack';
import { runFloor } from './floor/run';

const TARGET = 100;

/** Items/s between the 10 % and the 90 % completion: start-up and the tail are not "sustained". */
function sustained(doneAt: number[]): number {
  const t = [...doneAt].sort((a, b) => a - b);
  const lo = Math.floor(t.length * 0.1);
  const hi = Math.floor(t.length * 0.9) - 1;
  return (hi - lo) / ((t[hi]! - t[lo]!) / 1000);
}

async function promisePool(base: string, n: number, concurrency: number, pollMs: number): Promise<{ doneAt: number[]; wallMs: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-pool-'));
  const agent = new Agent({ connections: concurrency, keepAliveTimeout: 30_000 });
  const headers = { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' };
  const doneAt: number[] = [];
  let next = 0;
  const t0 = Date.now();
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          const i = next++;
          const created = await request(`${base}/v1/video/generations`, {
            method: 'POST',
            headers,
            dispatcher: agent,
            body: JSON.stringify({ model: 'seedance-1-0-pro-250528', prompt: `pool prompt ${i}`, seconds: '5' }),
          });
          const { id } = (await created.body.json()) as { id: string };
          let url = '';
          for (let polls = 0; polls < 1000 && !url; polls++) {
            await sleep(pollMs);
            const r = await request(`${base}/v1/video/generations/${id}`, { headers, dispatcher: agent });
            const { data } = (await r.body.json()) as { data: { status: string; result_url: string } };
            if (data.status === 'SUCCESS') url = data.result_url;
            else if (data.status === 'FAILURE') throw new Error(`pool item ${i} failed`);
          }
          const video = await request(url, { headers, dispatcher: agent });
          if (video.statusCode !== 200) throw new Error(`download ${video.statusCode}`);
          await pipeline(video.body, createWriteStream(join(dir, `${i}.mp4`)));
          doneAt.push(Date.now());
        }
      }),
    );
    return { doneAt, wallMs: Date.now() - t0 };
  } finally {
    await agent.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const o = intFlags({ items: 2000, concurrency: 100, 'video-bytes': 1024 * 1024, 'poll-ms': 100, budget: 1 });
  say(
    `throughput: ${o.items} items, instant renders, ${o['video-bytes']} B videos, concurrency ${o.concurrency}, first check after ${o['poll-ms']} ms; ${machineLine()}`,
  );
  const stack = await startStack({ ports: [0], renderMs: 0, videoBytes: o['video-bytes'], seed: 3 });
  try {
    const pool = await promisePool(stack.sim.urls[0]!, o.items, o.concurrency, o['poll-ms']);
    const poolRate = sustained(pool.doneAt);
    say(
      `baseline Promise pool: ${o.items} items in ${seconds(pool.wallMs)} = ${(o.items / (pool.wallMs / 1000)).toFixed(1)} items/s overall, ${poolRate.toFixed(1)} items/s sustained`,
    );

    // Temporal's own ceiling here: the same workflow shape with activities that do nothing.
    const floor = await runFloor({
      address: stack.temporal.address,
      client: stack.client,
      serverPid: stack.temporal.serverPid,
      items: o.items,
      window: o.concurrency,
      firstCheckMs: o['poll-ms'],
    });
    say(
      `Temporal floor (same workflow shape, no-op activities, same server): ${o.items} items in ${seconds(floor.wallMs)} = ${floor.itemsPerSecond.toFixed(1)} items/s; CPU per item: server ${(floor.serverCpuMs / o.items).toFixed(1)} ms, worker ${(floor.workerCpuMs / o.items).toFixed(1)} ms`,
    );

    const run = await runJob(stack, {
      name: 'bench-throughput',
      items: items('throughput', o.items),
      maxInFlight: o.concurrency,
      polling: `polling:\n  initial: ${o['poll-ms']}ms\n  max: 2s\n  timeout: 10m`,
    });
    const ok = run.rows.filter((r) => r.state === 'succeeded' && r.bytes === o['video-bytes']).length;
    if (ok !== o.items) throw new Error(`${ok} of ${o.items} items succeeded with the full video`);
    const wall = run.lastFileAt - run.startedAt;
    const rate = sustained(run.rows.map((r) => Date.parse(r.finished_at)));
    const mem = stack.worker.memory();
    say(
      `reelflow (Temporal + worker process): ${o.items} items in ${seconds(wall)} = ${(o.items / (wall / 1000)).toFixed(1)} items/s overall, ${rate.toFixed(1)} items/s sustained; worker peak RSS ${(mem.peak / 2 ** 20).toFixed(0)} MiB`,
    );
    const budgeted = o.budget ? await runWithBudget(stack, o) : undefined;
    if (budgeted)
      say(
        `the same job with a price and a budget (every create reserved first): ${budgeted.toFixed(1)} items/s sustained, ${(budgeted / rate).toFixed(3)} x the job without`,
      );
    emit({
      figure: 'throughput_instant_renders_1mib',
      value: rate,
      unit: 'items/s',
      baseline: poolRate,
      ratio: rate / poolRate,
      target: `>= ${TARGET} items/s`,
      meets: rate >= TARGET,
      overall: Number((o.items / (wall / 1000)).toFixed(1)),
      baselineOverall: Number((o.items / (pool.wallMs / 1000)).toFixed(1)),
      items: o.items,
      concurrency: o.concurrency,
      temporalFloor: Number(floor.itemsPerSecond.toFixed(1)),
      ratioToFloor: Number((o.items / (wall / 1000) / floor.itemsPerSecond).toFixed(3)),
      ...(budgeted ? { withBudget: Number(budgeted.toFixed(1)), budgetRatio: Number((budgeted / rate).toFixed(3)) } : {}),
    });
  } finally {
    await stack.stop();
  }
}

/** Sustained items/s of the same job with every item priced and a budget it never reaches. */
async function runWithBudget(stack: Stack, o: Record<string, number>): Promise<number> {
  const run = await runJob(stack, {
    name: 'bench-throughput-budget',
    items: items('budget', o.items!),
    maxInFlight: o.concurrency!,
    polling: `polling:\n  initial: ${o['poll-ms']!}ms\n  max: 2s\n  timeout: 10m`,
    extra: 'pricing:\n  seedance-1-0-pro-250528:\n    per_video: 0.01\nbudget:\n  max_usd: 1000000',
  });
  const ok = run.rows.filter((r) => r.state === 'succeeded').length;
  if (ok !== o.items) throw new Error(`with a budget: ${ok} of ${o.items!} items succeeded`);
  if (!run.rows.every((r) => r.cost_usd !== undefined)) throw new Error('with a budget: some rows carry no cost');
  return sustained(run.rows.map((r) => Date.parse(r.finished_at)));
}

main().catch(fail);
