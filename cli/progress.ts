// Live progress: a redrawn bar and one line per item in flight on a terminal; plain periodic lines
// otherwise. Reads the job's `progress` query and, for the lines shown, each item's `itemStatus`.
import type { Client } from '@temporalio/client';
import type { JobProgress, RenderStatus } from '../workflows/types';
import { color, formatDuration } from './output';

const SHOWN_ITEMS = 8;

export async function itemStatuses(client: Client, progress: JobProgress, limit: number): Promise<RenderStatus[]> {
  const shown = progress.inFlight.slice(0, limit);
  const answers = await Promise.allSettled(shown.map((i) => client.workflow.getHandle(i.workflowId).query<RenderStatus>('itemStatus')));
  return answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
}

export function progressBar(done: number, total: number, width = 24): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

export function summaryLine(p: JobProgress, ratePerSec?: number): string {
  const c = p.counts;
  const done = c.succeeded + c.failed + c.timed_out + c.canceled + c.unknown + c.skipped;
  const parts = [
    `${p.job}: ${done}/${p.total}`,
    color.green(`${c.succeeded} ok`),
    ...(c.skipped ? [`${c.skipped} already done`] : []),
    ...(c.failed ? [color.red(`${c.failed} failed`)] : []),
    ...(c.timed_out ? [color.red(`${c.timed_out} timed out`)] : []),
    ...(c.unknown ? [color.yellow(`${c.unknown} unknown`)] : []),
    ...(c.canceled ? [color.yellow(`${c.canceled} canceled`)] : []),
    `${c.in_flight} in flight`,
    ...(ratePerSec !== undefined && ratePerSec > 0 ? [`${ratePerSec.toFixed(ratePerSec < 1 ? 2 : 1)}/s`] : []),
    ...(p.etaMs !== undefined ? [`ETA ${formatDuration(p.etaMs)}`] : []),
  ];
  return parts.join('  ');
}

function itemLine(s: RenderStatus): string {
  const pct = s.progress !== undefined ? ` ${String(Math.round(s.progress)).padStart(3)}%` : '';
  const base = s.baseUrl ? color.dim(` via ${s.baseUrl}`) : '';
  return `  ${s.key.padEnd(14)} ${s.phase.padEnd(11)}${pct}${s.polls ? color.dim(` polls ${s.polls}`) : ''}${base}`;
}

/** Redraws in place on a terminal; prints a line every `plainEveryMs` (or on change) otherwise. */
export class ProgressView {
  private lastLines = 0;
  private lastPlain = '';
  private lastPlainAt = 0;
  private samples: Array<{ at: number; done: number }> = [];

  constructor(private readonly client: Client, private readonly tty: boolean, private readonly plainEveryMs = 5_000) {}

  async render(progress: JobProgress): Promise<void> {
    const c = progress.counts;
    const done = c.succeeded + c.failed + c.timed_out + c.canceled + c.unknown;
    const now = Date.now();
    this.samples.push({ at: now, done });
    while (this.samples.length > 2 && now - this.samples[0]!.at > 30_000) this.samples.shift();
    const first = this.samples[0]!;
    const rate = now > first.at ? ((done - first.done) * 1000) / (now - first.at) : undefined;
    const headline = summaryLine(progress, rate);
    if (!this.tty) {
      if (headline !== this.lastPlain && now - this.lastPlainAt >= this.plainEveryMs) {
        process.stderr.write(`${headline}\n`);
        this.lastPlain = headline;
        this.lastPlainAt = now;
      }
      return;
    }
    const items = await itemStatuses(this.client, progress, SHOWN_ITEMS);
    const lines = [`${progressBar(done + c.skipped, progress.total)} ${headline}`, ...items.map(itemLine)];
    if (progress.inFlight.length > items.length) lines.push(color.dim(`  … and ${progress.inFlight.length - items.length} more in flight`));
    this.clear();
    process.stderr.write(`${lines.join('\n')}\n`);
    this.lastLines = lines.length;
  }

  clear(): void {
    if (this.tty && this.lastLines > 0) process.stderr.write(`\u001b[${this.lastLines}A\u001b[0J`);
    this.lastLines = 0;
  }
}
