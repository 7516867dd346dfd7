// Runs `reelflow validate` on one job file in this process and prints what it cost, as one JSON line
// on stdout: exit code, CPU milliseconds (not wall time, which a loaded CI machine stretches:
// a 1 s check failed there for work that costs a tenth of that), peak resident set size. Tests start it as a child (with a heap
// cap) to show that a hostile job file is refused quickly and in little memory.
import { runValidate } from '../../cli/commands/validate';

async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file) throw new Error('usage: validate-probe.ts JOB.yaml');
  let stderr = '';
  const started = process.cpuUsage();
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
  const cpu = process.cpuUsage(started);
  const ms = (cpu.user + cpu.system) / 1000;
  // maxRSS is in kilobytes.
  const peakMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify({ code, ms, peakMb, stderr: stderr.slice(0, 2000) })}\n`);
}

void main();
