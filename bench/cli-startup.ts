// Benchmark: how long a command that runs no worker takes, start to exit, as a user types it
// (`reelflow validate jobs/demo.yaml`, the built command on this Node). Baseline: Node itself
// starting and exiting (`node -e 0`), measured in the same run. The Temporal worker's SDK loads
// only where a worker runs (worker/temporal.ts connectWorker), not for validate, status or results.
// Last line: {"figure","value","unit","baseline","ratio","target","meets"}.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { emit, intFlags, machineLine, median, say } from './lib/report';

const { runs: RUNS } = intFlags({ runs: 9 }, 50);
/** What a user waits for a command that only reads a file, on this 2-core machine. */
const TARGET_MS = 1000;
const BIN = join(__dirname, '..', 'bin', 'reelflow.js');

/** The median wall time of `args` run by this Node, in ms. */
function wallMs(args: string[]): number {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const start = performance.now();
    execFileSync(process.execPath, args, { stdio: 'ignore', env: { ...process.env, NO_COLOR: '1' } });
    times.push(performance.now() - start);
  }
  return median(times);
}

say(machineLine());
const node = wallMs(['-e', '0']);
const version = wallMs([BIN, '--version']);
const validate = wallMs([BIN, 'validate', join(__dirname, '..', 'jobs', 'demo.yaml')]);
say(
  `node -e 0: ${node.toFixed(0)} ms; reelflow --version: ${version.toFixed(0)} ms; reelflow validate jobs/demo.yaml: ${validate.toFixed(0)} ms (median of ${RUNS})`,
);
emit({
  figure: 'reelflow validate, start to exit',
  value: validate,
  unit: 'ms',
  baseline: node,
  ratio: validate / node,
  target: `under ${TARGET_MS} ms`,
  meets: validate < TARGET_MS,
  version_ms: Math.round(version),
});
