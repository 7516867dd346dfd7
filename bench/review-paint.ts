// Benchmark: first paint of the review page (docs/review.md) of a 1,000-take job in Chromium
// (Debian's, through playwright-core), served by the review server as `reelflow review` serves it.
// Baseline: the same page of a 36-take job, measured in the same run. Each page is loaded RUNS
// times in a fresh browser context (no cache); the figure is the median first-contentful-paint.
// Last line: {"figure","value","unit","baseline","ratio","target","meets"}.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { LocalStorage } from '../storage';
import { LiveJob } from '../review/live';
import { startReviewServer } from '../review/server';
import { findMediaTools } from '../review/report/posters';
import { CHROMIUM, CHROMIUM_ARGS, assertChromium } from '../test/support/chromium';
import { tempDir } from '../test/support/jobs';
import { writeTakesJob } from '../test/support/review-fixture';
import { emit, intFlags, machineLine, median, say } from './lib/report';

const { runs: RUNS } = intFlags({ runs: 7 }, 50);
const TARGET_MS = 1000;

/** `takes` takes: items x 2 ratios x takes per prompt. */
const SIZES: Record<number, { items: number; takes: number }> = {
  36: { items: 6, takes: 3 },
  1000: { items: 125, takes: 4 },
};

async function firstPaints(browser: Browser, takes: number): Promise<{ fcp: number[]; bytes: number }> {
  const dir = tempDir('reelflow-bench-review-');
  try {
    await mkdir(join(dir, 'out'));
    const shape = SIZES[takes]!;
    const fixture = await writeTakesJob(join(dir, 'out'), { ...shape, failEvery: 37 });
    if (fixture.rows.length !== takes) throw new Error(`expected ${takes} takes, made ${fixture.rows.length}`);
    const storage = new LocalStorage(join(dir, 'out'));
    const live = new LiveJob({ storage, localDir: join(dir, 'out'), tools: await findMediaTools() });
    const server = await startReviewServer({ job: `bench-${takes}`, live, storage, ffmpeg: true, localDir: join(dir, 'out') });
    try {
      await live.start();
      const fcp: number[] = [];
      let bytes = 0;
      for (let run = 0; run < RUNS; run++) {
        const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
        const page = await context.newPage();
        const response = await page.goto(server.url, { waitUntil: 'load' });
        bytes = (await response?.body())?.length ?? 0;
        // The paint entry can come after the load event: wait for it (buffered), a few seconds at most.
        const paint = await page.evaluate(
          () =>
            new Promise<number>((done) => {
              const g = globalThis as unknown as {
                PerformanceObserver: new (cb: (list: { getEntries(): Array<{ name: string; startTime: number }> }) => void) => {
                  observe(o: { type: string; buffered: boolean }): void;
                };
                setTimeout(fn: () => void, ms: number): void;
              };
              new g.PerformanceObserver((list) => {
                const fcp = list.getEntries().find((e) => e.name === 'first-contentful-paint');
                if (fcp) done(fcp.startTime);
              }).observe({ type: 'paint', buffered: true });
              g.setTimeout(() => done(-1), 10_000);
            }),
        );
        if (paint < 0) throw new Error('no first-contentful-paint entry');
        fcp.push(paint);
        await context.close();
      }
      return { fcp, bytes };
    } finally {
      await server.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  assertChromium();
  say(machineLine());
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const small = await firstPaints(browser, 36);
    const large = await firstPaints(browser, 1000);
    say(`36 takes: page ${(small.bytes / 1024).toFixed(0)} KiB, first paint ${small.fcp.map((x) => x.toFixed(0)).join(', ')} ms`);
    say(`1000 takes: page ${(large.bytes / 1024).toFixed(0)} KiB, first paint ${large.fcp.map((x) => x.toFixed(0)).join(', ')} ms`);
    const value = median(large.fcp);
    const baseline = median(small.fcp);
    emit({
      figure: `review page first contentful paint, 1,000 takes, Chromium 1400x900 (median of ${RUNS})`,
      value,
      unit: 'ms',
      baseline,
      ratio: baseline > 0 ? value / baseline : null,
      target: `< ${TARGET_MS} ms`,
      meets: value < TARGET_MS,
    });
  } finally {
    await browser.close();
  }
}

void main();
