// Failover: the primary base address dies mid-run (its port refuses connections, as a killed
// process's port does). Two figures, each against the same thing with no failure, in this run:
//  1. The job (Temporal + worker process, two base addresses): items failed (target 0) and the
//     added time per item, spread over the gateway calls the item made.
//  2. Added latency per call once the primary is in cooldown, measured on the gateway client alone
//     (status checks paced over 20 s, so cooldown expiries and probes of the dead base are included);
//     also with a primary that hangs instead of refusing (request_timeout 2 s), for the record.
//   npx tsx bench/failover.ts [--items 100] [--max-in-flight 50] [--render-ms 2000] [--calls-seconds 20]
import { createGatewayClient } from '../gateway/index';
import type { PortMode, SimHandleExt } from '../sim/index';
import { emit, fail, intFlags, machineLine, say } from './lib/report';
import { BENCH_KEY, items, runJob, sleep, startStack, type JobRun } from './lib/stack';

const TARGET_ADDED_MS = 1000;
const mean = (v: number[]): number => v.reduce((a, b) => a + b, 0) / Math.max(1, v.length);

/** Mean latency of paced status checks (20 per second) over `durationMs`, and the bases that served them. */
async function pacedChecks(
  sim: SimHandleExt,
  durationMs: number,
  primary: PortMode | null,
): Promise<{ meanMs: number; maxMs: number; calls: number; bases: Set<string> }> {
  const client = createGatewayClient({ baseUrls: sim.urls, apiKey: BENCH_KEY, requestTimeoutMs: 2_000, connectTimeoutMs: 2_000 });
  try {
    const { taskId } = await client.createTask({
      model: 'seedance-1-0-pro-250528',
      protocol: 'general',
      prompt: `failover probe ${primary ?? 'up'}`,
      seconds: '5',
      references: [],
    });
    const ref = { taskId, protocol: 'general' as const };
    await client.getTask(ref); // warm connections
    if (primary) await sim.setPortMode(0, primary);
    // The first call after the death pays for discovering it; the figure is what comes after.
    await client.getTask(ref);
    const latencies: number[] = [];
    const bases = new Set<string>();
    const end = Date.now() + durationMs;
    for (let i = 0; i < 100_000 && Date.now() < end; i++) {
      const t = performance.now();
      const s = await client.getTask(ref);
      latencies.push(performance.now() - t);
      bases.add(s.baseUrl);
      await sleep(50);
    }
    return { meanMs: mean(latencies), maxMs: Math.max(...latencies), calls: latencies.length, bases };
  } finally {
    if (primary) await sim.setPortMode(0, 'up');
    await client.close();
  }
}

function perItem(run: JobRun): { meanMs: number; calls: number } {
  const ms = run.rows.map((r) => Date.parse(r.finished_at) - Date.parse(r.created_at!));
  // create + status checks + download (+1 for the result_url content request)
  const calls = mean(run.rows.map((r) => r.polls + 2));
  return { meanMs: mean(ms), calls };
}

async function main(): Promise<void> {
  const o = intFlags({ items: 100, 'max-in-flight': 50, 'render-ms': 2000, 'calls-seconds': 20 });
  say(
    `failover: ${o.items} items, ${o['render-ms']} ms renders, max_in_flight ${o['max-in-flight']}, two base addresses; ${machineLine()}`,
  );
  const stack = await startStack({ ports: [0, 0], renderMs: o['render-ms'], seed: 9 });
  try {
    const spec = (name: string) => ({
      name,
      items: items(name, o.items),
      maxInFlight: o['max-in-flight'],
      polling: 'polling:\n  initial: 1s\n  max: 5s\n  timeout: 10m',
      extra: 'retries:\n  download: 5',
    });
    const baseline = await runJob(stack, spec('failover-baseline'));
    // The primary dies once a quarter of the items have been created.
    const createsBefore = stack.sim.stats().tasksCreated;
    let killedAt = 0;
    const killer = (async () => {
      for (let i = 0; i < 6000 && stack.sim.stats().tasksCreated - createsBefore < o.items / 4; i++) await sleep(10);
      await stack.sim.setPortMode(0, 'refuse');
      killedAt = Date.now();
    })();
    const failed = await runJob(stack, spec('failover-primary-killed'));
    await killer;
    await stack.sim.setPortMode(0, 'up');

    const notOk = failed.rows.filter((r) => r.state !== 'succeeded');
    const base = perItem(baseline);
    const hit = perItem(failed);
    const primaryPort = new URL(stack.sim.urls[0]!).port;
    const afterKill = failed.rows.filter((r) => Date.parse(r.finished_at) > killedAt);
    const onAlternate = afterKill.filter((r) => r.base_url && !r.base_url.includes(`:${primaryPort}`)).length;
    const addedPerCallJob = (hit.meanMs - base.meanMs) / hit.calls;
    say(
      `job without failure: ${baseline.rows.length} items, ${(base.meanMs / 1000).toFixed(2)} s per item (create->recorded), ${base.calls.toFixed(1)} calls/item`,
    );
    say(
      `job with the primary killed: ${notOk.length} of ${failed.rows.length} items not succeeded, ${(hit.meanMs / 1000).toFixed(2)} s per item; ${onAlternate} of ${afterKill.length} items finished after the kill were served by the alternate`,
    );
    say(
      `  -> added per item ${(hit.meanMs - base.meanMs).toFixed(0)} ms, per call ${addedPerCallJob.toFixed(0)} ms (job level, includes Temporal noise)`,
    );

    await pacedChecks(stack.sim, 2000, null); // warm-up (JIT, connections)
    const up = await pacedChecks(stack.sim, o['calls-seconds'] * 1000, null);
    const refused = await pacedChecks(stack.sim, o['calls-seconds'] * 1000, 'refuse');
    const hung = await pacedChecks(stack.sim, o['calls-seconds'] * 1000, 'hang');
    say(
      `gateway client, status checks every 50 ms for ${o['calls-seconds']} s: both up ${up.meanMs.toFixed(2)} ms/call; primary refusing ${refused.meanMs.toFixed(2)} ms/call (max ${refused.maxMs.toFixed(0)} ms, ${refused.calls} calls); primary hanging ${hung.meanMs.toFixed(2)} ms/call (max ${hung.maxMs.toFixed(0)} ms)`,
    );
    const added = refused.meanMs - up.meanMs;
    emit({
      figure: 'failover_added_latency_per_call',
      value: added,
      unit: 'ms',
      baseline: up.meanMs,
      ratio: refused.meanMs / up.meanMs,
      target: `0 items failed; < ${TARGET_ADDED_MS} ms added per call once the primary is in cooldown`,
      meets: notOk.length === 0 && added < TARGET_ADDED_MS && hung.meanMs - up.meanMs < TARGET_ADDED_MS,
      itemsFailed: notOk.length,
      items: failed.rows.length,
      addedPerCallJobMs: Number(addedPerCallJob.toFixed(1)),
      addedPerCallHangMs: Number((hung.meanMs - up.meanMs).toFixed(2)),
      maxCallHangMs: Number(hung.maxMs.toFixed(0)),
    });
  } finally {
    await stack.stop();
  }
}

main().catch(fail);
