// The review page in real Chromium shows each assembled film with a player that plays it from the
// review server, and each chain of shots as a strip of its shots in order with the takes of each
// under it. The chains come from the plan items' `needs` (jobfile/chains.ts), which `reelflow review`
// passes from the loaded job file (cli/commands/review.ts); here the items are given directly. The
// server, storage, film (real ffmpeg, the assembleFilm activity) and browser are real.
import assert from 'node:assert/strict';
import { createReadStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { chromium, type Browser } from 'playwright-core';
import { assembleFilm, type FilmOutcome } from '../../activities/assemble';
import { closeActivityResources } from '../../activities/context';
import { chainsOf } from '../../review/report/films';
import { findMediaTools } from '../../review/report/posters';
import { LiveJob } from '../../review/live';
import { startReviewServer, type ReviewServer } from '../../review/server';
import type { OutputSettings } from '../../jobfile/plan';
import { LocalStorage } from '../../storage';
import { assertChromium, CHROMIUM, CHROMIUM_ARGS } from '../support/chromium';
import { makeClip } from '../support/clips';
import { tempDir } from '../support/jobs';
import { manifestRow } from '../support/storage';

const OUTPUT = resolve(__dirname, '../../test-output');

/** What the test reads of an element (the project compiles without the DOM library). */
interface El {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<El>;
}
declare const document: {
  querySelectorAll(s: string): ArrayLike<El>;
  querySelector(s: string): (El & { duration: number; readyState: number; play(): Promise<void> }) | null;
};

// Shot 1 has two takes; 2 continues from shot 1's last frame, 3 from 2's; `solo` is in no chain.
const PLAN = [
  { key: 'shot-1~t1' },
  { key: 'shot-1~t2' },
  { key: 'shot-2', needs: [{ key: 'shot-1~t1', use: 'last_frame' as const }] },
  { key: 'shot-3', needs: [{ key: 'shot-2', use: 'last_frame' as const }] },
  { key: 'solo' },
];

describe('films and chains on the review page', () => {
  let browser: Browser | undefined;
  let server: ReviewServer | undefined;
  const dir = tempDir('reelflow-review-films-');
  const output: OutputSettings = { storage: 'local', dir: join(dir, 'out') };
  before(async () => {
    assertChromium();
    mkdirSync(OUTPUT, { recursive: true });
    const storage = new LocalStorage(output.dir!);
    const shots: Array<[string, number, number, string]> = [
      ['shot-1~t1', 1, 1, 'red'],
      ['shot-1~t2', 1, 2, 'blue'],
      ['shot-2', 2, 1, 'green'],
      ['shot-3', 3, 1, 'yellow'],
      ['solo', 4, 1, 'gray'],
    ];
    for (const [key, index, take, tone] of shots) {
      const clip = makeClip(join(dir, `${key}.mp4`), { seconds: 2, tone: 200 + tone.length * 50 });
      const written = await storage.write(`${key}.mp4`, createReadStream(clip));
      await storage.appendManifest(
        manifestRow(index, { key, id: key.replace(/~t\d$/, ''), take, file: written.name, bytes: written.bytes, sha256: written.sha256 }),
      );
    }
    const film = (await new MockActivityEnvironment().run(assembleFilm, {
      output,
      assembly: { name: 'lighthouse', keys: ['shot-1~t1', 'shot-2', 'shot-3'], crossfadeSec: 0.5 },
    })) as FilmOutcome;
    assert.equal(film.state, 'made');
    const live = new LiveJob({ storage, tools: await findMediaTools(), localDir: output.dir! });
    await live.start();
    server = await startReviewServer({ job: 'lighthouse', live, storage, ffmpeg: true, localDir: output.dir!, chains: chainsOf(PLAN) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await closeActivityResources();
  });

  it('plays the film and shows the chain as a strip of its shots, takes under each', async () => {
    const page = await browser!.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(server!.url);
    const film = await page.evaluate(() => {
      const el = document.querySelectorAll('.film')[0]!;
      return { name: el.getAttribute('data-film'), text: el.textContent };
    });
    assert.equal(film.name, 'lighthouse');
    assert.match(film.text ?? '', /shot-1~t1 → shot-2 → shot-3/);
    assert.match(film.text ?? '', /5\.0 s/);
    assert.match(film.text ?? '', /re-encode/);
    // The player loads the film from the review server: its length is the film's.
    await page.waitForFunction(() => (document.querySelector('.film video')?.readyState ?? 0) >= 1, undefined, { timeout: 20_000 });
    const duration = await page.evaluate(() => document.querySelector('.film video')!.duration);
    assert.ok(Math.abs(duration - 5) < 0.1, `the player says ${duration} s`);

    const strips = await page.evaluate(() =>
      Array.from(document.querySelectorAll('.strip')).map((strip) =>
        Array.from(strip.querySelectorAll('.shot')).map((shot) => ({
          shot: shot.getAttribute('data-shot'),
          takes: Array.from(shot.querySelectorAll('.stake')).map((t) => t.getAttribute('data-key')),
        })),
      ),
    );
    assert.deepEqual(strips, [
      [
        { shot: 'shot-1', takes: ['shot-1~t1', 'shot-1~t2'] },
        { shot: 'shot-2', takes: ['shot-2'] },
        { shot: 'shot-3', takes: ['shot-3'] },
      ],
    ]);
    await page.screenshot({ path: join(OUTPUT, 'review-films-1400x900.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });
});
