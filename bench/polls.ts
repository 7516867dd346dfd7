// Polling: renders of 30-120 s (uniform, seeded): status checks per task and how late completion is
// noticed, against a fixed 5 s poll interval on the same render times. Time is scaled down by
// --scale (default 4: renders of 7.5-30 s, polling.initial 10 s / max 60 s become 2.5 s / 15 s,
// the fixed interval 5 s becomes 1.25 s), so the ratios are those of the unscaled run; only the
// schedule's absolute 250 ms floor does not scale (it favours the baseline, if anything).
//   npx tsx bench/polls.ts [--items 120] [--max-in-flight 60] [--scale 4] [--seed 42] [--callbacks]
// --callbacks: the worker listens for the simulator's callbacks and the model takes them
// (docs/callbacks.md); polling.backstop is twice the longest render, so callbacks alone wake checks.
//
// Each task's render time comes from the simulator's own seeded dice, replayed here (sim/prng.ts:
// the "render-ms" and "task-id" streams advance once per create, in order), and is checked against
// the finish_time the simulator reports for every task (1 s resolution).
// Checks per task: sim.stats().pollsByTask. Noticed at: the manifest's finished_at (this includes
// the download and the manifest write, so the delay is an upper bound for reelflow, not the baseline).
import { request } from 'undici';
import { Dice } from '../sim/prng';
import { emit, fail, intFlags, machineLine, say, seconds } from './lib/report';
import { BENCH_KEY, items, runJob, startStack } from './lib/stack';
import { backstopLine, callbackJobLines, callbackWorkerArgs, withCallbacks } from './lib/callbacks';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** The simulator's render time per task id, for the first `n` creates of a simulator with this seed. */
function replayRenderTimes(seed: number, n: number, min: number, max: number): Map<string, number> {
  const dice = new Dice(seed);
  const out = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const renderMs = dice.between('render-ms', min, max);
    let id = 'task_';
    for (let c = 0; c < 32; c++) id += ALPHABET[Math.floor(dice.next('task-id') * ALPHABET.length)];
    out.set(id, renderMs);
  }
  return out;
}

const mean = (v: number[]): number => v.reduce((a, b) => a + b, 0) / v.length;
const pct = (v: number[], p: number): number => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * p))]!;

async function main(): Promise<void> {
  const o = intFlags({ items: 120, 'max-in-flight': 60, scale: 4, seed: 42 });
  const min = Math.round(30_000 / o.scale);
  const max = Math.round(120_000 / o.scale);
  const fixedMs = 5_000 / o.scale;
  say(
    `polls: ${o.items} items, renders ${min}-${max} ms (30-120 s scaled by 1/${o.scale}), max_in_flight ${o['max-in-flight']}; ${machineLine()}`,
  );
  if (withCallbacks) say('callbacks on: the worker listens (--callbacks), each create carries metadata.callback_url');
  const stack = await startStack({ ports: [0], renderMs: [min, max], seed: o.seed }, callbackWorkerArgs());
  try {
    const run = await runJob(stack, {
      name: 'bench-polls',
      items: items('polls', o.items),
      maxInFlight: o['max-in-flight'],
      polling: `polling:\n  initial: ${10_000 / o.scale}ms\n  max: ${60_000 / o.scale}ms\n  timeout: 10m${backstopLine(max)}`,
      extra: callbackJobLines(),
    });
    const stats = stack.sim.stats();
    const renderOf = replayRenderTimes(o.seed, stats.tasksCreated, min, max);
    const checks: number[] = [];
    const late: number[] = [];
    const lateMs: number[] = [];
    const baseChecks: number[] = [];
    const baseLate: number[] = [];
    for (const row of run.rows) {
      if (row.state !== 'succeeded' || !row.task_id || !row.created_at) throw new Error(`item ${row.key} ended ${row.state}`);
      const renderMs = renderOf.get(row.task_id);
      if (renderMs === undefined) throw new Error(`task ${row.task_id} not in the replayed simulator timeline (sim/ changed its dice?)`);
      const created = Date.parse(row.created_at);
      // Cross-check the replay against the simulator's own report (seconds resolution).
      const r = await request(`${stack.sim.urls[0]!}/v1/video/generations/${row.task_id}`, {
        headers: { authorization: `Bearer ${BENCH_KEY}` },
      });
      const { data } = (await r.body.json()) as { data: { finish_time: number } };
      if (Math.abs(data.finish_time - Math.floor((created + renderMs) / 1000)) > 1) {
        throw new Error(`replayed render time of ${row.task_id} disagrees with the simulator's finish_time`);
      }
      checks.push(stats.pollsByTask[row.task_id] ?? 0);
      late.push((Date.parse(row.finished_at) - (created + renderMs)) / renderMs);
      lateMs.push(Date.parse(row.finished_at) - (created + renderMs));
      const k = Math.ceil(renderMs / fixedMs);
      baseChecks.push(k);
      baseLate.push((k * fixedMs - renderMs) / renderMs);
    }
    const avg = mean(checks);
    const baseAvg = mean(baseChecks);
    const p95Late = pct(late, 0.95);
    say(
      `reelflow: ${avg.toFixed(2)} checks/task (max ${Math.max(...checks)}), noticed late by ${(mean(late) * 100).toFixed(1)} % of render time on average, p95 ${(p95Late * 100).toFixed(1)} %, max ${(Math.max(...late) * 100).toFixed(1)} %`,
    );
    // Items created before any other had finished had no median hint; the rest had one.
    const firstEnd = Math.min(...run.rows.map((r) => Date.parse(r.finished_at)));
    const early = run.rows.map((r, i) => ({ hinted: Date.parse(r.created_at!) >= firstEnd, late: late[i]!, checks: checks[i]! }));
    for (const hinted of [false, true]) {
      const g = early.filter((e) => e.hinted === hinted);
      if (g.length > 0)
        say(
          `  ${hinted ? 'with' : 'without'} the job's median hint: ${g.length} tasks, ${mean(g.map((e) => e.checks)).toFixed(2)} checks/task, late by ${(mean(g.map((e) => e.late)) * 100).toFixed(1)} % on average`,
        );
    }
    say(
      `fixed 5 s interval (computed on the same render times): ${baseAvg.toFixed(2)} checks/task, late by ${(mean(baseLate) * 100).toFixed(1)} % on average, p95 ${(pct(baseLate, 0.95) * 100).toFixed(1)} %`,
    );
    say(`render-time replay checked against the simulator's finish_time for all ${run.rows.length} tasks`);
    const p95LateMs = pct(lateMs, 0.95);
    say(`noticed late by ${seconds(mean(lateMs))} on average, p95 ${seconds(p95LateMs)} (render end to file recorded)`);
    if (withCallbacks) {
      say(`simulator callbacks: ${JSON.stringify(stats.callbacks)}; answers ${JSON.stringify(stats.callbackAnswers)}`);
      emit({
        figure: 'status_checks_per_task_30_120s_callbacks',
        value: avg,
        unit: 'checks/task',
        baseline: baseAvg,
        ratio: avg / baseAvg,
        target: '<= 1.5 checks/task avg, lateness p95 < 1 s',
        meets: avg <= 1.5 && p95LateMs < 1_000,
        lateMeanMs: Math.round(mean(lateMs)),
        lateP95Ms: Math.round(p95LateMs),
        lateP95Pct: Number((p95Late * 100).toFixed(2)),
        scale: o.scale,
        items: o.items,
      });
      return;
    }
    emit({
      figure: 'status_checks_per_task_30_120s',
      value: avg,
      unit: 'checks/task',
      baseline: baseAvg,
      ratio: avg / baseAvg,
      target: '<= 4 checks/task avg, completion noticed within 10 % of render time (p95)',
      meets: avg <= 4 && p95Late <= 0.1,
      lateMeanPct: Number((mean(late) * 100).toFixed(2)),
      lateP95Pct: Number((p95Late * 100).toFixed(2)),
      lateMaxPct: Number((Math.max(...late) * 100).toFixed(2)),
      baselineLateMeanPct: Number((mean(baseLate) * 100).toFixed(2)),
      scale: o.scale,
      items: o.items,
    });
  } finally {
    await stack.stop();
  }
}

main().catch(fail);
