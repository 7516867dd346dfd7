// Live progress: a redrawn bar and one line per item in flight on a terminal; plain periodic lines
// otherwise. Reads the job's `progress` query and, for the lines shown, each item's `itemStatus`.
import type { Client } from '@temporalio/client';
import { renderedCount, settledCount } from '../domain/end-states';
import type { JobProgress, RenderStatus } from '../workflows/types';
import { color, formatDuration } from '../client/format';
import { displayWidth, fitWidth, padToWidth, plainText } from '../client/terminal-text';
import { itemStatuses } from '../client/control';
import { chainLines } from './chain-lines';

const SHOWN_ITEMS = 8;

/**
 * Terminal rows a printed line takes at `columns` wide: how the terminal wraps it, or rewraps it
 * when the window gets narrower (xterm, VTE, iTerm2, tmux reflow their screen on a resize). A wide
 * character that does not fit at the end of a row moves whole to the next one.
 */
export function rowsTaken(line: string, columns: number): number {
  let rows = 1;
  let column = 0;
  for (const ch of plainText(line)) {
    const w = displayWidth(ch);
    if (column + w > columns) {
      rows++;
      column = 0;
    }
    column += w;
  }
  return rows;
}

export interface TerminalSize {
  columns: number;
  rows: number;
}

/**
 * The lines of one frame for a terminal of `size`. Every line fits in one row, so the frame takes
 * as many rows as it has lines; and the frame fits the screen, since rows scrolled above it cannot
 * be erased. The last column stays empty: a character the terminal draws wider than we count (an
 * East Asian ambiguous one) then still does not wrap.
 */
export function layoutFrame(header: string, items: string[], moreInFlight: number, size: TerminalSize, chain: string[] = []): string[] {
  // Header, the chain's lines (cli/chain-lines.ts), items, the "more" line and the row the cursor rests on.
  const shown = items.slice(0, Math.max(0, size.rows - 3 - chain.length));
  const more = moreInFlight + items.length - shown.length;
  const lines = [header, ...chain, ...shown, ...(more > 0 ? [color.dim(`  … and ${more} more in flight`)] : [])];
  return lines.map((line) => fitWidth(line, size.columns - 1));
}

export function progressBar(done: number, total: number, width = 24): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/** One count with its word, and a shorter word for a narrow terminal. */
type Fact = [text: string, short: string];

/** The summary's parts: the job's name (decoration on a narrow terminal), then what must stay. */
function summaryParts(p: JobProgress, ratePerSec?: number): { job: string; facts: Fact[] } {
  const c = p.counts;
  const done = settledCount(c);
  const count = (n: number, word: string, short: string, paint = (t: string) => t): Fact[] =>
    n ? [[paint(`${n} ${word}`), paint(`${n} ${short}`)]] : [];
  const same = (text: string): Fact => [text, text];
  // Before its plan is read the job has no counts: it says what it is doing.
  if (p.state === 'preparing')
    return { job: `${plainText(p.job)}: `, facts: [['preparing: reading the job file and its outputs', 'preparing']] };
  return {
    job: `${plainText(p.job)}: `,
    facts: [
      same(`${done}/${p.total}`),
      same(color.green(`${c.succeeded} ok`)),
      ...count(c.skipped, 'already done', 'done'),
      ...count(c.failed, 'failed', 'failed', (t) => color.red(t)),
      ...count(c.timed_out, 'timed out', 'late', (t) => color.red(t)),
      ...count(c.unknown, 'unknown', 'unknown', (t) => color.yellow(t)),
      ...count(c.canceled, 'canceled', 'canceled', (t) => color.yellow(t)),
      ...count(c.blocked ?? 0, 'blocked', 'blocked', (t) => color.red(t)),
      [`${c.in_flight} in flight`, `${c.in_flight} flying`],
      ...(ratePerSec !== undefined && ratePerSec > 0 ? [same(`${ratePerSec.toFixed(ratePerSec < 1 ? 2 : 1)}/s`)] : []),
      ...(p.etaMs !== undefined ? [same(`ETA ${formatDuration(p.etaMs)}`)] : []),
    ],
  };
}

export function summaryLine(p: JobProgress, ratePerSec?: number): string {
  const { job, facts } = summaryParts(p, ratePerSec);
  return `${job}${facts.map(([text]) => text).join('  ')}`;
}

/**
 * The frame's first line for a terminal `width` columns wide. The counts, the rate and the ETA are
 * what a user watches for; the bar, the job's name (shown above the frame already), then the double
 * spacing and long words go first, in that order, and only then is the line cut.
 */
export function progressHeader(p: JobProgress, ratePerSec: number | undefined, width: number): string {
  const c = p.counts;
  // A job preparing has no total yet: an empty bar, not a full one.
  const bar = p.state === 'preparing' ? progressBar(0, 1) : progressBar(settledCount(c), p.total);
  const { job, facts } = summaryParts(p, ratePerSec);
  const wide = facts.map(([text]) => text).join('  ');
  const narrow = facts.map(([, short]) => short).join(' ');
  const candidates = [`${bar} ${job}${wide}`, `${job}${wide}`, wide, narrow];
  return candidates.find((line) => displayWidth(line) <= width) ?? (candidates.at(-1) as string);
}

function itemLine(s: RenderStatus): string {
  const pct = s.progress !== undefined ? ` ${String(Math.round(s.progress)).padStart(3)}%` : '';
  const base = s.baseUrl ? color.dim(` via ${plainText(s.baseUrl)}`) : '';
  return `  ${padToWidth(plainText(s.key), 14)} ${s.phase.padEnd(11)}${pct}${s.polls ? color.dim(` polls ${s.polls}`) : ''}${base}`;
}

/** Where the display writes: stderr, or in tests a stand-in that records what it is given. */
export type ProgressOutput = Pick<NodeJS.WriteStream, 'write' | 'columns' | 'rows' | 'on' | 'off'> & {
  /** A terminal's size asked of it now (tty.WriteStream); `columns` and `rows` lag until SIGWINCH is handled. */
  getWindowSize?: () => [number, number];
};

/** Redraws in place on a terminal; prints a line every `plainEveryMs` (or on change) otherwise. */
export class ProgressView {
  /** The lines on screen now, as written: erasing them needs their rows at the current width. */
  private drawn: string[] = [];
  /** What the last frame showed, laid out again when the terminal is resized. */
  private frame?: { header: (width: number) => string; chain: (width: number) => string[]; items: string[]; more: number };
  /** Bumped by clear(): a render that was waiting for item statuses meanwhile draws nothing. */
  private generation = 0;
  private readonly onResize = () => this.draw();
  private lastPlain = '';
  private lastPlainAt = 0;
  private samples: Array<{ at: number; done: number }> = [];

  constructor(
    private readonly client: Client,
    private readonly tty: boolean,
    private readonly plainEveryMs = 5_000,
    private readonly out: ProgressOutput = process.stderr,
  ) {}

  async render(progress: JobProgress): Promise<void> {
    const c = progress.counts;
    const done = renderedCount(c);
    const now = Date.now();
    this.samples.push({ at: now, done });
    while (this.samples.length > 2 && now - this.samples[0]!.at > 30_000) this.samples.shift();
    const first = this.samples[0]!;
    const rate = now > first.at ? ((done - first.done) * 1000) / (now - first.at) : undefined;
    const headline = summaryLine(progress, rate);
    if (!this.tty) {
      if (headline !== this.lastPlain && now - this.lastPlainAt >= this.plainEveryMs) {
        this.out.write(`${headline}\n`);
        this.lastPlain = headline;
        this.lastPlainAt = now;
      }
      return;
    }
    const generation = this.generation;
    const items = await itemStatuses(this.client, progress, SHOWN_ITEMS);
    if (generation !== this.generation) return;
    if (!this.frame) this.out.on('resize', this.onResize);
    this.frame = {
      header: (width) => progressHeader(progress, rate, width),
      // Which shot waits on which, which are blocked and why: one bounded line each (docs/chains.md).
      chain: (width) => chainLines(progress, width - 2).map((line) => `  ${line}`),
      items: items.map(itemLine),
      more: progress.inFlight.length - items.length,
    };
    this.draw();
  }

  /** Erases the frame; the display stays off until the next render. */
  clear(): void {
    this.generation++;
    this.frame = undefined;
    this.out.off('resize', this.onResize);
    if (this.drawn.length > 0) this.out.write(this.erasure());
    this.drawn = [];
  }

  /** Replaces the frame on screen with the current one, laid out for the terminal's size now. */
  private draw(): void {
    if (!this.frame) return;
    const size = this.size();
    // The last column stays free (layoutFrame).
    const lines = layoutFrame(
      this.frame.header(size.columns - 1),
      this.frame.items,
      this.frame.more,
      size,
      this.frame.chain(size.columns - 1),
    );
    // One write: the terminal never shows the screen erased but not yet drawn.
    this.out.write(`${this.erasure(size.columns)}${lines.map((line) => `${line}\n`).join('')}`);
    this.drawn = lines;
  }

  /**
   * The terminal's size now. A frame drawn between a resize and the handling of its SIGWINCH (a
   * loaded machine) was laid out, and the previous one erased, at the old width: stale rows stayed
   * on screen (seen in CI under load). Asking the terminal itself closes that window.
   */
  private size(): TerminalSize {
    const [columns, rows] = this.out.getWindowSize?.() ?? [this.out.columns, this.out.rows];
    return { columns: columns || 80, rows: rows || 24 };
  }

  /** Moves up over the rows the frame takes at this width and erases to the end of the screen. */
  private erasure(columns = this.size().columns): string {
    const rows = this.drawn.reduce((sum, line) => sum + rowsTaken(line, columns), 0);
    return rows > 0 ? `\r\u001b[${rows}A\u001b[0J` : '';
  }
}
