// The static `reelflow report` shows films and chains as the review page does (docs/chains.md,
// "Seeing it"): each assembled film with a player, each chain of shots as a strip of its shots in
// order with the takes of each under it, a blocked shot with the need that blocked it. The job file
// (its `needs` make the chains), storage, the film (real ffmpeg, the assembleFilm activity), the
// command and Chromium (opening report.html from disk) are real; the rows are written directly.
import assert from 'node:assert/strict';
import { createReadStream, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { chromium, type Browser } from 'playwright-core';
import { assembleFilm, type FilmOutcome } from '../../activities/assemble';
import { closeActivityResources } from '../../activities/context';
import type { OutputSettings } from '../../jobfile/plan';
import { LocalStorage } from '../../storage';
import { assertChromium, CHROMIUM, CHROMIUM_ARGS } from '../support/chromium';
import { runCli } from '../support/cli';
import { makeClip } from '../support/clips';
import { tempDir } from '../support/jobs';
import { manifestRow } from '../support/storage';

const OUTPUT = resolve(__dirname, '../../test-output');

interface El {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<El>;
}
declare const document: {
  querySelectorAll(s: string): ArrayLike<El>;
  querySelector(s: string): (El & { duration: number; readyState: number }) | null;
};

// Shot 1 has two takes; 2-5 each continue from the last frame of the one before; shot 4 failed, so
// shot 5 is blocked; `solo` is in no chain. The film cuts shots 1-3.
const JOB = `version: 1
name: report-films
gateway:
  base_urls: [http://127.0.0.1:9]
defaults:
  model: doubao-seedance-2-0-260128
  seconds: "2"
output:
  dir: ./out
items:
  - id: shot-1
    prompt: "keeper climbs"
    variants: 2
  - id: shot-2
    prompt: "door opens"
    references:
      - image: { last_frame_of: shot-1 }
  - id: shot-3
    prompt: "lamp turns"
    references:
      - image: { last_frame_of: shot-2 }
  - id: shot-4
    prompt: "storm arrives"
    references:
      - image: { last_frame_of: shot-3 }
  - id: shot-5
    prompt: "dawn"
    references:
      - image: { last_frame_of: shot-4 }
  - id: solo
    prompt: "a gull"
assemble:
  - name: lighthouse
    items: [shot-1, shot-2, shot-3]
    crossfade: 0.5s
`;

describe('films and chains in the static report', () => {
  let browser: Browser | undefined;
  const dir = tempDir('reelflow-report-films-');
  const output: OutputSettings = { storage: 'local', dir: join(dir, 'out') };
  let job: string;

  before(async () => {
    assertChromium();
    mkdirSync(OUTPUT, { recursive: true });
    job = join(dir, 'report-films.yaml');
    writeFileSync(job, JOB);
    const storage = new LocalStorage(output.dir!);
    const shots: Array<[key: string, id: string, index: number, take: number, prompt: string]> = [
      ['shot-1', 'shot-1', 1, 1, 'keeper climbs'],
      ['shot-1~t2', 'shot-1', 1, 2, 'keeper climbs'],
      ['shot-2', 'shot-2', 2, 1, 'door opens'],
      ['shot-3', 'shot-3', 3, 1, 'lamp turns'],
      ['solo', 'solo', 6, 1, 'a gull'],
    ];
    for (const [key, id, index, take, prompt] of shots) {
      const clip = makeClip(join(dir, `${key}.mp4`), { seconds: 2, tone: 300 + index * 40 });
      const written = await storage.write(`${key}.mp4`, createReadStream(clip));
      await storage.appendManifest(
        manifestRow(index, {
          key,
          id,
          take,
          prompt,
          model: 'doubao-seedance-2-0-260128',
          file: written.name,
          bytes: written.bytes,
          sha256: written.sha256,
        }),
      );
    }
    await storage.appendManifest(
      manifestRow(4, {
        key: 'shot-4',
        id: 'shot-4',
        prompt: 'storm arrives',
        model: 'doubao-seedance-2-0-260128',
        state: 'failed',
        error: { kind: 'render_failed', message: 'the render failed' },
      }),
    );
    await storage.appendManifest(
      manifestRow(5, {
        key: 'shot-5',
        id: 'shot-5',
        prompt: 'dawn',
        model: 'doubao-seedance-2-0-260128',
        state: 'blocked',
        task_id: null,
        polls: 0,
        error: { kind: 'blocked', message: 'shot-4 ended failed' },
        blocked_by: 'shot-4',
      }),
    );
    const film = (await new MockActivityEnvironment().run(assembleFilm, {
      output,
      assembly: { name: 'lighthouse', keys: ['shot-1', 'shot-2', 'shot-3'], crossfadeSec: 0.5 },
    })) as FilmOutcome;
    assert.equal(film.state, 'made');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await closeActivityResources();
  });

  it('report.html plays the film and shows the chain as a strip, takes under each shot, the blocked one and why', async () => {
    const made = await runCli(['report', job, '--json'], { env: { ...process.env, GATEWAY_API_KEY: 'sk-unused-report-films' } });
    assert.equal(made.code, 0, made.stderr);
    const { path } = JSON.parse(made.stdout) as { path: string };
    const page = await browser!.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(pathToFileURL(path).href, { waitUntil: 'load' });
    const film = await page.evaluate(() => {
      const el = document.querySelectorAll('.film')[0];
      return el ? { name: el.getAttribute('data-film'), text: el.textContent } : undefined;
    });
    assert.equal(film?.name, 'lighthouse');
    assert.match(film.text ?? '', /shot-1 → shot-2 → shot-3/);
    assert.match(film.text ?? '', /5\.0 s/);
    // The player loads the film from beside report.html: its length is the film's.
    await page.waitForFunction(() => (document.querySelector('.film video')?.readyState ?? 0) >= 1, undefined, { timeout: 20_000 });
    const duration = await page.evaluate(() => document.querySelector('.film video')!.duration);
    assert.ok(Math.abs(duration - 5) < 0.1, `the player says ${duration} s`);

    const strips = await page.evaluate(() =>
      Array.from(document.querySelectorAll('.strip')).map((strip) =>
        Array.from(strip.querySelectorAll('.shot')).map((shot) => ({
          shot: shot.getAttribute('data-shot'),
          takes: Array.from(shot.querySelectorAll('.stake')).map((t) => `${t.getAttribute('data-key')}: ${t.textContent}`),
        })),
      ),
    );
    assert.deepEqual(strips, [
      [
        { shot: 'shot-1', takes: ['shot-1: take 1 succeeded', 'shot-1~t2: take 2 succeeded'] },
        { shot: 'shot-2', takes: ['shot-2: take 1 succeeded'] },
        { shot: 'shot-3', takes: ['shot-3: take 1 succeeded'] },
        { shot: 'shot-4', takes: ['shot-4: take 1 failed'] },
        { shot: 'shot-5', takes: ['shot-5: take 1 blocked on shot-4'] },
      ],
    ]);
    await page.screenshot({ path: join(OUTPUT, 'report-films-1400x1000.png'), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });
});
