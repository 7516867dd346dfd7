// The review page made for comparing (docs/review.md), in real Chromium (Debian's): finished jobs of 36,
// 200 and 1,000 takes served by `reelflow review`, screenshots at 1400x900 and 390x844 written to
// test-output/ (looked at by a person: docs/review.md); at 390 px the counters, the filters and
// the failure list are on screen and usable; the large player opens a take big, the arrow keys move
// between its siblings (and to the next prompt), the pick keys work there, and `n` never makes a
// pick.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { CliRun } from '../support/cli';
import { tempDir } from '../support/jobs';
import { writeTakesJob, type TakesJob } from '../support/review-fixture';
import { assertChromium, CHROMIUM, CHROMIUM_ARGS } from '../support/chromium';
import { startReview, stopReview } from '../support/review-cli';

const OUTPUT = resolve(__dirname, '../../test-output');

/** Items x 2 ratios x takes: the three sizes the issue names. */
const SIZES = [
  { takes: 36, items: 6, perPrompt: 3 },
  { takes: 200, items: 50, perPrompt: 2 },
  { takes: 1000, items: 125, perPrompt: 4 },
];

interface Box {
  top: number;
  bottom: number;
  left: number;
  right: number;
}
interface El {
  hidden: boolean;
  scrollHeight: number;
  clientHeight: number;
  scrollTop: number;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): Box;
}
declare const document: { querySelector(s: string): El | null; querySelectorAll(s: string): ArrayLike<El> };
declare function getComputedStyle(e: El): { backgroundColor: string };

async function serveJob(
  dir: string,
  takes: { items: number; perPrompt: number },
): Promise<{ review: { cli: CliRun; url: string }; fixture: TakesJob }> {
  await mkdir(join(dir, 'out'), { recursive: true });
  const fixture = await writeTakesJob(join(dir, 'out'), { items: takes.items, takes: takes.perPrompt, failEvery: 23 });
  await writeFile(
    join(dir, 'shoes.yaml'),
    [
      'version: 1',
      'name: shoes',
      'gateway:\n  base_urls:\n    - http://127.0.0.1:9',
      'defaults:\n  model: seedance-1-0-pro-250528',
      'output:\n  dir: ./out',
      'items:\n  - prompt: placeholder',
      '',
    ].join('\n'),
  );
  return { review: await startReview(join(dir, 'shoes.yaml')), fixture };
}

/** Whether the box lies inside a 390 px wide viewport of `height`. */
function onScreen(box: Box | undefined, height: number): boolean {
  return box !== undefined && box.left >= 0 && box.right <= 390 && box.top >= 0 && box.bottom <= height;
}

async function box(page: Page, selector: string): Promise<Box | undefined> {
  return page.$eval(selector, (e) => (e as unknown as El).getBoundingClientRect()).catch(() => undefined);
}

void describe('review page: 36, 200 and 1,000 takes at 1400x900 and 390x844', { timeout: 600_000 }, () => {
  let browser: Browser;
  const dirs: string[] = [];

  before(async () => {
    assertChromium();
    await mkdir(OUTPUT, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  for (const size of SIZES) {
    void it(`${size.takes} takes: one row per prompt, posters at load, counters and failures usable on a phone`, async () => {
      const dir = tempDir(`reelflow-review-${size.takes}-`);
      dirs.push(dir);
      const { review, fixture } = await serveJob(dir, size);
      try {
        assert.equal(fixture.rows.length, size.takes);
        const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(review.url, { waitUntil: 'load' });
        assert.equal(await page.locator('#grid .group').count(), size.items * 2, 'one row per prompt');
        assert.equal(await page.locator('#grid .group:first-child .take').count(), size.perPrompt, 'its takes side by side');
        // Nothing black or empty where a poster goes: every poster in view has loaded.
        const loaded = await page.$$eval('#grid .take[data-video] img', (imgs) =>
          imgs
            .filter((i) => (i as unknown as El).getBoundingClientRect().top < 900)
            .map(
              (i) =>
                (i as unknown as { complete: boolean; naturalWidth: number }).complete &&
                (i as unknown as { naturalWidth: number }).naturalWidth > 0,
            ),
        );
        assert.ok(loaded.length > 0 && loaded.every(Boolean), `posters in view: ${loaded.join(',')}`);
        await page.screenshot({ path: join(OUTPUT, `review-${size.takes}-1400x900.png`) });

        await page.setViewportSize({ width: 390, height: 844 });
        await page.screenshot({ path: join(OUTPUT, `review-${size.takes}-390x844.png`) });
        for (const stat of ['succeeded', 'kept', 'rejected', 'new']) {
          const b = await box(page, stat === 'succeeded' ? '.stat.succeeded' : `[data-stat=${stat}]`);
          assert.ok(onScreen(b, 844), `the ${stat} counter is on screen at 390 px: ${JSON.stringify(b)}`);
        }
        for (const filter of ['state', 'model'])
          assert.ok(onScreen(await box(page, `select[data-filter=${filter}]`), 844), `the ${filter} filter`);
        // The failure list: on screen, scrollable, and says how many there are; its last entry can be reached.
        const failures = fixture.failed.length;
        if (failures > 3) {
          assert.match((await page.textContent('#failures h2')) ?? '', new RegExp(`\\(${failures}\\) scroll for all ${failures}`));
          const list = await page.$eval('#failures .problems', (e) => ({
            scroll: (e as unknown as El).scrollHeight,
            client: (e as unknown as El).clientHeight,
          }));
          assert.ok(list.scroll > list.client, 'the list scrolls inside its box');
          await page.$eval('#failures .problems', (e) => {
            (e as unknown as El).scrollTop = 1e6;
          });
          const last = await page.$$eval('#failures li.problem', (li) => {
            const l = li[li.length - 1] as unknown as El;
            const list = document.querySelector('#failures .problems')!.getBoundingClientRect();
            const r = l.getBoundingClientRect();
            return r.bottom <= list.bottom + 1 && r.top >= list.top - 1;
          });
          assert.ok(last, 'the last failure scrolls into the list');
        }
        // Choosing a take on a phone: its details come up below, and the large player fills the width.
        await page.click('#grid .take[data-video] >> nth=0');
        await page.waitForSelector('#player:not([hidden])');
        const player = await box(page, '#pvideo');
        assert.ok(player && player.right - player.left > 340, `the player is ${JSON.stringify(player)}`);
        await page.screenshot({ path: join(OUTPUT, `review-${size.takes}-390x844-player.png`) });
        await page.keyboard.press('Escape');
        assert.deepEqual(errors, []);
        await page.close();
      } finally {
        assert.equal(await stopReview(review.cli), 130);
      }
    });
  }

  void it('the large player: a take opens big, arrows move between its siblings, keys pick there, n never makes a pick', async () => {
    const dir = tempDir('reelflow-review-player-');
    dirs.push(dir);
    const { review, fixture } = await serveJob(dir, { items: 6, perPrompt: 3 });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(review.url, { waitUntil: 'load' });
      const first = await page.$$eval('#grid .group:first-child .take', (t) => t.map((x) => (x as unknown as El).getAttribute('data-key')));
      assert.deepEqual(first, ['shoe-1.16-9', 'shoe-1.16-9~t2', 'shoe-1.16-9~t3']);
      await page.click('#grid .group:first-child .take:first-child');
      await page.waitForSelector('#player:not([hidden])');
      const big = await box(page, '#pvideo');
      assert.ok(big && big.right - big.left > 800, `the take plays big: ${JSON.stringify(big)}`);
      assert.match((await page.textContent('#ptitle')) ?? '', /shoe-1 · 16:9 · veo-3.1-fast-generate-001 · take 1/);
      assert.equal(await page.textContent('#ppos'), '1 of 3');
      // The page behind is hidden, not read through the player's title (at .88 it showed through).
      const backdrop = await page.$eval('#player', (e) => getComputedStyle(e as unknown as El).backgroundColor);
      const alpha = Number(/rgba\([^)]*,\s*([\d.]+)\)/.exec(backdrop)?.[1] ?? 1);
      assert.ok(alpha >= 0.95, `the player's backdrop is ${backdrop}`);
      await page.screenshot({ path: join(OUTPUT, 'review-player-1400x900.png') });

      // `n` on a take with no pick: says so, and makes no pick.
      await page.keyboard.press('n');
      assert.match((await page.textContent('#ppick')) ?? '', /keep \(k\) or reject \(x\) this take first/);
      assert.equal(await page.locator('.take[data-pick]').count(), 0);

      await page.keyboard.press('ArrowRight');
      assert.equal(await page.textContent('#ppos'), '2 of 3');
      assert.equal(await page.getAttribute('.take.sel', 'data-key'), 'shoe-1.16-9~t2');
      await page.keyboard.press('x');
      await page.waitForSelector('#player[data-pick=reject]');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('k');
      await page.waitForSelector('#player[data-pick=keep]');
      await page.keyboard.press('ArrowRight');
      assert.equal(await page.textContent('#ppos'), '3 of 3', 'the last sibling stays the last');
      // A note on a kept take keeps it kept.
      page.once('dialog', (d) => void d.accept('best light'));
      await page.keyboard.press('n');
      await page.waitForSelector('.take[data-note="best light"][data-pick=keep]');
      await page.keyboard.press('ArrowDown');
      assert.equal(await page.getAttribute('.take.sel', 'data-key'), 'shoe-1.9-16~t3', 'the same place in the next prompt');
      await page.keyboard.press('Escape');
      await page.waitForSelector('#player', { state: 'hidden' });

      const lines = (await readFile(join(dir, 'out', '.reelflow', 'picks.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { key: string; verdict: string; note?: string; file?: string });
      const fileOf = (key: string) => fixture.rows.find((r) => r.key === key)?.file;
      assert.deepEqual(
        lines.map((l) => [l.key, l.verdict, l.note ?? null, l.file]),
        [
          ['shoe-1.16-9~t2', 'reject', null, fileOf('shoe-1.16-9~t2')],
          ['shoe-1.16-9~t3', 'keep', null, fileOf('shoe-1.16-9~t3')],
          ['shoe-1.16-9~t3', 'keep', 'best light', fileOf('shoe-1.16-9~t3')],
        ],
      );
      await page.close();
    } finally {
      assert.equal(await stopReview(review.cli), 130);
    }
  });
});
