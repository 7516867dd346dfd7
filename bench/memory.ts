// Memory: a 10,000-item job. Peak RSS of the worker process (VmHWM of `reelflow worker`, a child
// process) and the largest workflow history among the job's runs (it continues as new) and its
// children, from visibility (historyLength). Also how long the job took.
//   npx tsx bench/memory.ts [--items 10000] [--max-in-flight 100]
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { emit, fail, intFlags, machineLine, say, seconds } from './lib/report';
import { items, listJobExecutions, readManifest, runJob, startStack } from './lib/stack';

const MIB = 2 ** 20;
const TARGET_RSS_MIB = 300;
const TARGET_EVENTS = 10_000;

async function main(): Promise<void> {
  const o = intFlags({ items: 10_000, 'max-in-flight': 100 });
  say(`memory: ${o.items} items, renders 200-800 ms, max_in_flight ${o['max-in-flight']}; ${machineLine()}`);
  const stack = await startStack({ ports: [0], renderMs: [200, 800], seed: 13 });
  const timeline: string[] = [];
  const t0 = Date.now();
  const sampler = setInterval(() => {
    const m = stack.worker.memory();
    let done = 0;
    try {
      done = readManifest(join(stack.dir, 'bench-memory')).rows.length;
    } catch {
      /* no manifest yet */
    }
    timeline.push(
      `${seconds(Date.now() - t0)}: ${done} items ended, worker RSS ${(m.rss / MIB).toFixed(0)} MiB (peak ${(m.peak / MIB).toFixed(0)} MiB)`,
    );
    process.stderr.write(`${timeline[timeline.length - 1]!}\n`);
  }, 30_000);
  try {
    const run = await runJob(stack, {
      name: 'bench-memory',
      items: items('memory', o.items),
      maxInFlight: o['max-in-flight'],
      polling: 'polling:\n  initial: 500ms\n  max: 2s\n  timeout: 10m',
    });
    clearInterval(sampler);
    const mem = stack.worker.memory();
    const ok = run.rows.filter((r) => r.state === 'succeeded').length;
    const executions = await listJobExecutions(stack.client, run.workflowId);
    const jobRuns = executions.filter((e) => e.workflowId === run.workflowId);
    const largest = executions.reduce((a, b) => (b.historyLength > a.historyLength ? b : a));
    const largestChild = Math.max(...executions.filter((e) => e.workflowId !== run.workflowId).map((e) => e.historyLength));
    const took = run.resultAt - run.startedAt;
    for (const l of timeline) say(l);
    say(`${ok} of ${o.items} items succeeded in ${seconds(took)} (${(o.items / (took / 1000)).toFixed(1)} items/s)`);
    say(`worker peak RSS (VmHWM) ${(mem.peak / MIB).toFixed(0)} MiB, at the end ${(mem.rss / MIB).toFixed(0)} MiB`);
    say(
      `${executions.length} executions listed: ${jobRuns.length} runs of the job (continue-as-new), largest history ${largest.historyLength} events (${largest.workflowId}), largest child ${largestChild} events`,
    );
    if (ok !== o.items) {
      for (const r of run.rows.filter((row) => row.state !== 'succeeded').slice(0, 20)) {
        say(`not succeeded: ${r.key} ${r.state} task ${r.task_id ?? '-'} ${r.error ? `${r.error.kind}: ${r.error.message}` : ''}`);
      }
      if (run.rows.length < o.items) say(`${o.items - run.rows.length} items have no manifest row at all`);
      keepWorkerLog(stack.temporal.stateDir);
    }
    if (executions.length !== jobRuns.length + o.items)
      say(`note: visibility listed ${executions.length - jobRuns.length} children for ${o.items} items`);
    emit({
      figure: 'worker_peak_rss_and_largest_history',
      value: mem.peak / MIB,
      unit: 'MiB',
      baseline: null,
      ratio: mem.peak / MIB / TARGET_RSS_MIB,
      target: `< ${TARGET_RSS_MIB} MiB worker RSS; <= ${TARGET_EVENTS} events in any history`,
      meets: mem.peak / MIB < TARGET_RSS_MIB && largest.historyLength <= TARGET_EVENTS && ok === o.items,
      largestHistoryEvents: largest.historyLength,
      jobRuns: jobRuns.length,
      largestChildEvents: largestChild,
      items: o.items,
      succeeded: ok,
      jobSeconds: Number((took / 1000).toFixed(1)),
    });
  } finally {
    clearInterval(sampler);
    await stack.stop();
  }
}

/** Items that did not succeed in a fault-free run are a finding: keep the worker's log to study. */
function keepWorkerLog(stateDir: string): void {
  const log = join(stateDir, 'logs', 'reelflow.log');
  if (!existsSync(log)) return;
  mkdirSync(join('test-output', 'bench'), { recursive: true });
  const kept = join('test-output', 'bench', 'memory-worker.log');
  copyFileSync(log, kept);
  say(`some items did not succeed: the worker's log is kept in ${kept}`);
}

main().catch(fail);
