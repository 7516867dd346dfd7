// Picks after a prompt edit (docs/takes.md), as a producer meets them: the built CLI, a
// real Temporal development server and the simulator over HTTP, picks made with the keyboard on the
// review page in Chromium. One item's prompt is edited after the picks and the job run again: its
// takes are rendered anew beside the old files. The new renders were never seen, so they start
// unpicked and are marked new; the old picks stay with the old files; `results --kept` lists the
// files that were kept; `--redo rejected` has nothing to redo.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';
import { assertChromium, CHROMIUM, CHROMIUM_ARGS } from '../support/chromium';
import { startReview, stopReview } from '../support/review-cli';

const KEY = 'sk-test-review-picks-0123456789';
const VARIANTS = 'models:\n  seedance-1-0-pro-250528:\n    variants: 2';

type Row = { key: string; state: string; file: string | null; pick?: string };

void describe('review: picks stay with the render that was seen', { timeout: 300_000 }, () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [200, 500], seed: 33 });

  void it('a prompt edited after picking: new renders start unpicked, results --kept lists the kept files', async () => {
    assertChromium();
    const dir = tempDir('reelflow-review-picks-');
    const items = [
      { id: 'shoe', prompt: 'A red running shoe on wet asphalt' },
      { id: 'hat', prompt: 'A straw hat on a beach towel' },
    ];
    const job = writeJob(dir, { name: 'picks', baseUrls: e2e.sim.urls, items, extra: VARIANTS });
    const first = await runCli(['run', job], { env: e2e.env });
    assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`);

    // Keep shoe's take 1, reject its take 2, keep hat's take 1: on the page, with the keyboard.
    let review = await startReview(job, e2e.env);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      let page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(review.url, { waitUntil: 'load' });
      for (const key of ['k', 'x', 'k']) {
        await page.keyboard.press('ArrowRight');
        await page.keyboard.press(key);
      }
      await page.waitForFunction(
        () =>
          (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll(
            '.take[data-pick]',
          ).length === 3,
      );
      assert.equal(await stopReview(review.cli), 130);
      await page.close();

      // The producer edits shoe's description and runs the job again: shoe's two takes are new renders.
      writeFileSync(job, readFileSync(job, 'utf8').replace('A red running shoe on wet asphalt', 'A red trail shoe on wet asphalt'));
      const second = await runCli(['run', job], { env: e2e.env });
      assert.equal(second.code, 0, `${second.stdout}\n${second.stderr}`);

      const kept = await runCli(['results', job, '--kept'], { env: e2e.env });
      assert.equal(kept.code, 0, kept.stderr);
      const out = join(dir, 'out');
      assert.deepEqual(
        kept.stdout.trim().split('\n'),
        [join(out, '001-shoe.mp4'), join(out, '002-hat.mp4')],
        'the files that were kept, not the new render no one has seen',
      );
      const results = await runCli(['results', job, '--format', 'json'], { env: e2e.env });
      const rows = JSON.parse(results.stdout) as Row[];
      assert.deepEqual(
        rows.map((r) => [r.key, r.file, r.pick ?? null]),
        [
          ['shoe', rows[0]!.file, null],
          ['shoe~t2', rows[1]!.file, null],
          ['hat', '002-hat.mp4', 'keep'],
          ['hat~t2', '002-hat-t2.mp4', null],
        ],
      );
      assert.match(rows[0]!.file ?? '', /^001-shoe\.[0-9a-f]{8}\.mp4$/, 'shoe was rendered anew beside its old file');
      const redo = await runCli(['run', job, '--redo', 'rejected'], { env: e2e.env });
      assert.equal(redo.code, 0, `${redo.stdout}\n${redo.stderr}`);
      assert.match(redo.stderr, /nothing to redo/, 'the reject was of the old render of shoe~t2');

      // The page: shoe's row shows its new takes unpicked and marked new, the old ones with their picks.
      review = await startReview(job, e2e.env);
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(review.url, { waitUntil: 'load' });
      const shoe = await page.$$eval('#grid .group:first-child .take', (tiles) =>
        tiles.map((t) => [
          t.getAttribute('data-key'),
          t.getAttribute('data-file'),
          t.getAttribute('data-pick'),
          t.hasAttribute('data-new'),
          t.hasAttribute('data-earlier'),
        ]),
      );
      assert.deepEqual(shoe, [
        ['shoe', rows[0]!.file, null, true, false],
        ['shoe', '001-shoe.mp4', 'keep', false, true],
        ['shoe~t2', rows[1]!.file, null, true, false],
        ['shoe~t2', '001-shoe-t2.mp4', 'reject', false, true],
      ]);
      assert.equal(await page.textContent('[data-stat=kept] b'), '2');
      assert.equal(await page.textContent('[data-stat=new] b'), '2');
      // Keeping the new render of shoe adds a pick of its own; the old one stays kept.
      await page.click('#grid .group:first-child .take:first-child');
      await page.keyboard.press('k');
      await page.waitForFunction(
        () =>
          (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll(
            '.take[data-pick=keep]',
          ).length === 3,
      );
      await page.keyboard.press('Escape');
      const both = await runCli(['results', job, '--kept'], { env: e2e.env });
      assert.deepEqual(both.stdout.trim().split('\n'), [join(out, '001-shoe.mp4'), join(out, rows[0]!.file!), join(out, '002-hat.mp4')]);
    } finally {
      await browser.close();
      await stopReview(review.cli);
    }
  });

  void it('a review left open across the re-run: the renders that came after its first pick are marked new', async () => {
    // Walking a campaign through review, the producer kept one review open while redoing and editing: its page said
    // "0 new" though 10 takes had come since the picks, as this session had no earlier pick to go by.
    const dir = tempDir('reelflow-review-open-');
    const items = [
      { id: 'shoe', prompt: 'An open review: a red running shoe' },
      { id: 'hat', prompt: 'An open review: a straw hat' },
    ];
    const job = writeJob(dir, { name: 'picks-open', baseUrls: e2e.sim.urls, items, extra: VARIANTS });
    const first = await runCli(['run', job], { env: e2e.env });
    assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`);
    const review = await startReview(job, e2e.env);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(review.url, { waitUntil: 'load' });
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('k');
      await page.waitForSelector('.take[data-pick=keep]');
      await page.close();

      writeFileSync(job, readFileSync(job, 'utf8').replace('An open review: a red running shoe', 'An open review: a red trail shoe'));
      const second = await runCli(['run', job], { env: e2e.env });
      assert.equal(second.code, 0, `${second.stdout}\n${second.stderr}`);
      // The same review, the page loaded again once the server has read the new rows.
      await new Promise((r) => setTimeout(r, 2_500));
      const again = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await again.goto(review.url, { waitUntil: 'load' });
      const fresh = await again.$$eval('.take[data-new]', (tiles) => tiles.map((t) => t.getAttribute('data-key')));
      assert.deepEqual(fresh.sort(), ['shoe', 'shoe~t2']);
      assert.equal(await again.textContent('[data-stat=new] b'), '2');
    } finally {
      await browser.close();
      await stopReview(review.cli);
    }
  });
});
