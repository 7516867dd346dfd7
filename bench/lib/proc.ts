// What a process has cost, from Linux's /proc (benchmarks run on Linux).
import { readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system, all threads) a process has used; 0 where unavailable (it exited, or
 * no pid). The fields are counted after the last ')', because a command name may contain one.
 */
export function processCpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}
