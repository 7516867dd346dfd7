// Makespan: 400 items, 5 s renders, max_in_flight 100. Wall time from the job's start to its last
// file (latest manifest finished_at), against the ideal: waves x render time (4 x 5 s = 20 s).
// The window, polling timers, creates and downloads all run through Temporal and the worker process.
//   npx tsx bench/makespan.ts [--items 400] [--render-ms 5000] [--max-in-flight 100] [--initial-ms 5000] [--callbacks]
// --callbacks: the worker listens for the simulator's callbacks and the model takes them
// (docs/callbacks.md); polling.backstop is twice the render, so callbacks alone wake checks. Its
// target is the floor: within 2 % of it.
// --initial-ms is the job's polling.initial: 5000 models a user who knows the model's render time;
// smaller values exercise the adaptive schedule (progress extrapolation, then the job's median).
import { emit, fail, intFlags, machineLine, say, seconds } from './lib/report';
import { items, runJob, startStack } from './lib/stack';
import { runFloor } from './floor/run';
import { backstopLine, callbackJobLines, callbackWorkerArgs, withCallbacks } from './lib/callbacks';

const TARGET = 1.1;

async function main(): Promise<void> {
  const o = intFlags({ items: 400, 'render-ms': 5000, 'max-in-flight': 100, 'initial-ms': 5000 });
  say(
    `makespan: ${o.items} items, ${o['render-ms']} ms renders, max_in_flight ${o['max-in-flight']}, polling.initial ${o['initial-ms']} ms; ${machineLine()}`,
  );
  if (withCallbacks) say('callbacks on: the worker listens (--callbacks), each create carries metadata.callback_url');
  const stack = await startStack({ ports: [0], renderMs: o['render-ms'], seed: 7 }, callbackWorkerArgs());
  try {
    // Temporal's own cost here: the same workflow shape, a 5 s timer in place of the render, and
    // activities that do nothing. Its makespan is the best any one-child-per-item design gets here.
    const floor = await runFloor({
      address: stack.temporal.address,
      client: stack.client,
      serverPid: stack.temporal.serverPid,
      items: o.items,
      window: o['max-in-flight'],
      firstCheckMs: o['render-ms'],
    });
    say(
      `Temporal floor (same workflow shape, ${seconds(o['render-ms'])} timer, no-op activities): makespan ${seconds(floor.wallMs)}; CPU per item: server ${(floor.serverCpuMs / o.items).toFixed(1)} ms, worker ${(floor.workerCpuMs / o.items).toFixed(1)} ms`,
    );

    const run = await runJob(stack, {
      name: 'bench-makespan',
      items: items('makespan', o.items),
      maxInFlight: o['max-in-flight'],
      polling: `polling:\n  initial: ${o['initial-ms']}ms\n  max: 10s\n  timeout: 10m${backstopLine(o['render-ms'])}`,
      extra: callbackJobLines(),
    });
    const succeeded = run.rows.filter((r) => r.state === 'succeeded').length;
    if (succeeded !== o.items) throw new Error(`${succeeded} of ${o.items} items succeeded`);
    const makespan = run.lastFileAt - run.startedAt;
    const waves = Math.ceil(o.items / o['max-in-flight']);
    const ideal = waves * o['render-ms'];
    const polls = run.rows.reduce((a, r) => a + r.polls, 0) / run.rows.length;
    const itemMs = run.rows.map((r) => Date.parse(r.finished_at) - Date.parse(r.created_at!)).sort((a, b) => a - b);
    const firstCreate = Math.min(...run.rows.map((r) => Date.parse(r.created_at!)));
    say(`first create ${seconds(firstCreate - run.startedAt)} after start (plan preparation, first page, worker pick-up)`);
    say(
      `per item create->recorded: median ${seconds(itemMs[Math.floor(itemMs.length / 2)]!)}, p95 ${seconds(itemMs[Math.floor(itemMs.length * 0.95)]!)}; ${polls.toFixed(2)} checks/item`,
    );
    say(
      `makespan ${seconds(makespan)} (job result after ${seconds(run.resultAt - run.startedAt)}); ideal ${waves} waves x ${seconds(o['render-ms'])} = ${seconds(ideal)}`,
    );
    if (withCallbacks) {
      const toFloor = makespan / floor.wallMs;
      say(`callbacks on: makespan ${(makespan / ideal).toFixed(3)} x ideal, ${toFloor.toFixed(3)} x the Temporal floor of the same run`);
      emit({
        figure: `makespan_${o.items}x${o['render-ms'] / 1000}s_window${o['max-in-flight']}_callbacks`,
        value: makespan / 1000,
        unit: 's',
        baseline: floor.wallMs / 1000,
        ratio: toFloor,
        target: '<= 1.02 x the Temporal floor of the same run',
        meets: toFloor <= 1.02,
        idealS: ideal / 1000,
        idealRatio: Number((makespan / ideal).toFixed(3)),
        floorRatio: Number((floor.wallMs / ideal).toFixed(3)),
        checksPerItem: Number(polls.toFixed(2)),
      });
      return;
    }
    emit({
      figure: 'makespan_400x5s_window100',
      value: makespan / 1000,
      unit: 's',
      baseline: ideal / 1000,
      ratio: makespan / ideal,
      target: `<= ${TARGET} x ideal`,
      meets: makespan / ideal <= TARGET,
      items: o.items,
      renderMs: o['render-ms'],
      maxInFlight: o['max-in-flight'],
      temporalFloorS: floor.wallMs / 1000,
      floorRatio: Number((floor.wallMs / ideal).toFixed(3)),
      pollingInitialMs: o['initial-ms'],
      checksPerItem: Number(polls.toFixed(2)),
    });
  } finally {
    await stack.stop();
  }
}

main().catch(fail);
