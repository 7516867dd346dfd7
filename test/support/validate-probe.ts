// Runs `reelflow validate` on one job file in this process and prints what it cost, as one JSON line
// on stdout: exit code, milliseconds, peak resident set size. Tests start it as a child (with a heap
// cap) to show that a hostile job file is refused quickly and in little memory.
import { runValidate } from '../../cli/commands/validate';

async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file) throw new Error('usage: validate-probe.ts JOB.yaml');
  let stderr = '';
  const started = performance.now();
  const code = await runValidate(
    file,
    {},
    {
      stdout: () => undefined,
      stderr: (t) => {
        stderr += t;
      },
      stdoutIsTTY: false,
    },
  );
  const ms = performance.now() - started;
  // maxRSS is in kilobytes.
  const peakMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify({ code, ms, peakMb, stderr: stderr.slice(0, 2000) })}\n`);
}

void main();
