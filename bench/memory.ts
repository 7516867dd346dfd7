// Memory: does a worker's memory grow with the size of the job? A job of --items (default 10,000)
// and, measured in the same run right before it on a stack of its own, a baseline job of
// --baseline-items (default 1,000): peak RSS of each worker process (VmHWM of `reelflow worker`, a
// child process), their ratio (target: within 10 %, BENCHMARKS.md "memory"), the largest workflow history among
// the job's runs (it continues as new) and its children, from visibility, and how fast each ran.
// Peak memory follows the rate of work as well as the size (docs/worker-memory.md), so both rates
// are printed next to the figures.
//   npx tsx bench/memory.ts [--items 10000] [--baseline-items 1000] [--max-in-flight 100]
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { emit, fail, intFlags, machineLine, say, seconds } from './lib/report';
import { items, listJobExecutions, readManifest, runJob, startStack } from './lib/stack';

const MIB = 2 ** 20;
const TARGET_RSS_MIB = 300;
const TARGET_EVENTS = 10_000;
const TARGET_GROWTH = 1.1;

interface Measured {
  items: number;
  succeeded: number;
  peakMib: number;
  endMib: number;
  seconds: number;
  itemsPerSecond: number;
  /** The worker's CPU time (user and system) per item, ms. */
  cpuMsPerItem: number;
  largestHistory: number;
  largestChild: number;
  jobRuns: number;
}

async function measure(count: number, maxInFlight: number): Promise<Measured> {
  say(`memory: ${count} items, renders 200-800 ms, max_in_flight ${maxInFlight}; ${machineLine()}`);
  const stack = await startStack({ ports: [0], renderMs: [200, 800], seed: 13 });
  const name = `bench-memory-${count}`;
  const t0 = Date.now();
  const sampler = setInterval(() => {
    const m = stack.worker.memory();
    let done = 0;
    try {
      done = readManifest(join(stack.dir, name)).rows.length;
    } catch {
      /* no manifest yet */
    }
    say(
      `${seconds(Date.now() - t0)}: ${done} items ended, worker RSS ${(m.rss / MIB).toFixed(0)} MiB (peak ${(m.peak / MIB).toFixed(0)} MiB)`,
    );
  }, 30_000);
  try {
    const run = await runJob(stack, {
      name,
      items: items('memory', count),
      maxInFlight,
      polling: 'polling:\n  initial: 500ms\n  max: 2s\n  timeout: 10m',
    });
    clearInterval(sampler);
    const mem = stack.worker.memory();
    const cpu = stack.worker.cpuSeconds();
    const ok = run.rows.filter((r) => r.state === 'succeeded').length;
    const executions = await listJobExecutions(stack.client, run.workflowId);
    const jobRuns = executions.filter((e) => e.workflowId === run.workflowId);
    const largest = executions.reduce((a, b) => (b.historyLength > a.historyLength ? b : a));
    const largestChild = Math.max(...executions.filter((e) => e.workflowId !== run.workflowId).map((e) => e.historyLength));
    const took = run.resultAt - run.startedAt;
    const measured: Measured = {
      items: count,
      succeeded: ok,
      peakMib: Number((mem.peak / MIB).toFixed(1)),
      endMib: Number((mem.rss / MIB).toFixed(1)),
      seconds: Number((took / 1000).toFixed(1)),
      itemsPerSecond: Number((count / (took / 1000)).toFixed(1)),
      cpuMsPerItem: Number(((cpu * 1000) / count).toFixed(2)),
      largestHistory: largest.historyLength,
      largestChild,
      jobRuns: jobRuns.length,
    };
    say(`${ok} of ${count} items succeeded in ${seconds(took)} (${measured.itemsPerSecond} items/s)`);
    say(`worker peak RSS (VmHWM) ${measured.peakMib.toFixed(0)} MiB, at the end ${measured.endMib.toFixed(0)} MiB`);
    say(`worker CPU ${cpu.toFixed(1)} s, ${measured.cpuMsPerItem} ms per item`);
    say(
      `${executions.length} executions listed: ${jobRuns.length} runs of the job (continue-as-new), largest history ${largest.historyLength} events (${largest.workflowId}), largest child ${largestChild} events`,
    );
    if (ok !== count) {
      for (const r of run.rows.filter((row) => row.state !== 'succeeded').slice(0, 20)) {
        say(`not succeeded: ${r.key} ${r.state} task ${r.task_id ?? '-'} ${r.error ? `${r.error.kind}: ${r.error.message}` : ''}`);
      }
      if (run.rows.length < count) say(`${count - run.rows.length} items have no manifest row at all`);
      keepWorkerLog(stack.temporal.stateDir);
    }
    if (executions.length !== jobRuns.length + count)
      say(`note: visibility listed ${executions.length - jobRuns.length} children for ${count} items`);
    return measured;
  } finally {
    clearInterval(sampler);
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const o = intFlags({ items: 10_000, 'baseline-items': 1_000, 'max-in-flight': 100 });
  const baseline = await measure(o['baseline-items'], o['max-in-flight']);
  const job = await measure(o.items, o['max-in-flight']);
  const ratio = job.peakMib / baseline.peakMib;
  say(
    `peak RSS ${job.peakMib.toFixed(0)} MiB for ${job.items} items against ${baseline.peakMib.toFixed(0)} MiB for ${baseline.items}: ` +
      `${ratio.toFixed(3)} (${job.itemsPerSecond} and ${baseline.itemsPerSecond} items/s)`,
  );
  emit({
    figure: 'worker_peak_rss_growth_with_job_size',
    value: job.peakMib,
    unit: 'MiB',
    baseline: baseline.peakMib,
    ratio: Number(ratio.toFixed(3)),
    target: `peak RSS within ${Math.round((TARGET_GROWTH - 1) * 100)} % of the ${baseline.items}-item job's and < ${TARGET_RSS_MIB} MiB; <= ${TARGET_EVENTS} events in any history`,
    meets:
      ratio <= TARGET_GROWTH &&
      job.peakMib < TARGET_RSS_MIB &&
      job.largestHistory <= TARGET_EVENTS &&
      job.succeeded === job.items &&
      baseline.succeeded === baseline.items,
    job,
    baselineJob: baseline,
  });
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
