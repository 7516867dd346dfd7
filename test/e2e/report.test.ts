// report.html in a real browser: Debian's Chromium (scripts/browser.sh installs it) loads the page
// from a loopback HTTP server and from file://, every video's metadata and poster must load, the
// failures must be listed with their reasons, and nothing may fail or log an error.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { appendFile, mkdir, mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { ManifestRow } from '../../storage/manifest';
import { writeReport } from '../../review/report';
import { assertChromium, CHROMIUM, CHROMIUM_ARGS } from '../support/chromium';

const run = promisify(execFile);

// The few browser globals the page functions below use (tsconfig has no DOM lib; these run in Chromium).
interface DomVideo {
  currentSrc: string;
  readyState: number;
  duration: number;
  error: { code: number } | null;
  poster: string;
  muted: boolean;
  currentTime: number;
  play(): Promise<void>;
  pause(): void;
  getVideoPlaybackQuality(): { totalVideoFrames: number };
}
interface DomImage {
  onload: (() => void) | null;
  onerror: (() => void) | null;
  src: string;
  naturalWidth: number;
}
interface DomTile {
  getAttribute(name: string): string | null;
  querySelector(selector: string): { src?: string; appendChild(child: unknown): void } | null;
}
declare const document: {
  querySelectorAll(selector: 'video'): ArrayLike<DomVideo> & Iterable<DomVideo>;
  querySelectorAll(selector: '.take[data-video]'): ArrayLike<DomTile> & Iterable<DomTile>;
  createElement(tag: 'video'): DomVideo & { canPlayType(type: string): string; preload: string; src: string };
};
declare const Image: new () => DomImage;
declare const window: { __pwned?: number };
const SCREENSHOT = resolve(__dirname, '../../test-output/report.png');

/**
 * H.264 MP4s as the gateway serves them. The simulator's are H.264 High profile, padded to the
 * configured size with a trailing MP4 `free` box (sim/mp4.ts): the first one here is made the same way.
 */
const VIDEOS = [
  { file: '001-hero.mp4', source: 'testsrc=size=320x240:rate=25', profile: 'high', audio: false, padTo: 1 << 20 },
  { file: '002 sunset #2.mp4', source: 'testsrc2=size=320x180:rate=25', profile: 'main', audio: true, padTo: 0 },
  { file: '003-<bars> & co.mp4', source: 'smptebars=size=320x240:rate=25', profile: 'baseline', audio: false, padTo: 0 },
];

async function makeVideo(dir: string, video: (typeof VIDEOS)[number]): Promise<void> {
  const path = join(dir, video.file);
  const args = ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-f', 'lavfi', '-i', video.source];
  if (video.audio) args.push('-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100', '-c:a', 'aac', '-shortest');
  args.push('-t', '2', '-c:v', 'libx264', '-profile:v', video.profile, '-pix_fmt', 'yuv420p', '-movflags', '+faststart', path);
  await run('ffmpeg', args);
  const gap = video.padTo - (await stat(path)).size;
  if (gap >= 8) {
    const free = Buffer.alloc(gap);
    free.writeUInt32BE(gap, 0);
    free.write('free', 4, 'latin1');
    await appendFile(path, free);
  }
}

function row(index: number, fields: Partial<ManifestRow>): ManifestRow {
  return {
    key: `k${index}`,
    id: `item-${index}`,
    index,
    state: 'succeeded',
    model: 'veo-3-fast',
    protocol: 'general',
    prompt: `prompt ${index}`,
    task_id: `task_${index}abc`,
    base_url: 'http://127.0.0.1:8787',
    created_at: `2025-03-01T10:0${index}:00.000Z`,
    finished_at: `2025-03-01T10:0${index}:42.500Z`,
    polls: 3,
    file: null,
    bytes: null,
    sha256: null,
    error: null,
    ...fields,
  };
}

async function manifestRows(dir: string): Promise<ManifestRow[]> {
  const rows: ManifestRow[] = [];
  for (const [i, video] of VIDEOS.entries()) {
    const bytes = (await stat(join(dir, video.file))).size;
    rows.push(
      row(i + 1, {
        file: video.file,
        bytes,
        sha256: `${'ab12cd34'.repeat(8)}`,
        prompt: i === 2 ? 'bars <script>window.__pwned = 1</script> & "quotes"' : `A slow dolly shot, take ${i + 1}`,
        ...(i === 0 ? { enhanced_prompt: 'A slow cinematic dolly shot at golden hour, 35 mm, shallow depth of field.' } : {}),
        ...(i === 1 ? { protocol: 'openai', model: 'veo-3.1-fast-generate-001' } : {}),
      }),
    );
  }
  rows.push(row(4, { state: 'failed', error: { kind: 'content_policy', message: 'The prompt was rejected <by policy>.' } }));
  rows.push(row(5, { state: 'timed_out', error: { kind: 'timeout', message: 'Still rendering after 30m.' } }));
  rows.push(
    row(6, {
      state: 'unknown',
      task_id: null,
      created_at: null,
      error: { kind: 'create_outcome_unknown', message: 'Connection reset after the request was sent.' },
    }),
  );
  return rows;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.mp4': 'video/mp4',
  '.jpg': 'image/jpeg',
  '.jsonl': 'application/x-ndjson',
};

interface StaticServer {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

/** A loopback file server with byte ranges, as browsers expect for media. */
async function serveDirectory(root: string): Promise<StaticServer> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
      requests.push(`${req.method} ${pathname} ${req.headers.range ?? ''}`.trim());
      const file = resolve(root, `.${pathname}`);
      const info = file.startsWith(root + sep) ? await stat(file).catch(() => undefined) : undefined;
      if (!info?.isFile()) {
        res.writeHead(404).end();
        return;
      }
      const headers = { 'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream', 'accept-ranges': 'bytes' };
      const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
      let start = 0;
      let end = info.size - 1;
      if (range) {
        start = range[1] ? Number(range[1]) : Math.max(0, info.size - Number(range[2]));
        end = range[1] && range[2] ? Math.min(Number(range[2]), end) : end;
        if (start > end) {
          res.writeHead(416, { 'content-range': `bytes */${info.size}` }).end();
          return;
        }
        res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${info.size}`, 'content-length': end - start + 1 });
      } else {
        res.writeHead(200, { ...headers, 'content-length': info.size });
      }
      if (req.method === 'HEAD') res.end();
      else
        createReadStream(file, { start, end })
          .on('error', () => res.destroy())
          .pipe(res);
    })();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

interface PageProblems {
  consoleErrors: string[];
  failedRequests: string[];
}

function watch(page: Page): PageProblems {
  const problems: PageProblems = { consoleErrors: [], failedRequests: [] };
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.consoleErrors.push(msg.text());
  });
  page.on('pageerror', (error) => problems.consoleErrors.push(`pageerror: ${error.message}`));
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText ?? 'failed';
    // With preload="metadata" Chromium's media loader stops the transfer once it has the metadata:
    // an abort it makes itself, not a failure (the <video> element's own error/readyState say if it loaded).
    if (request.resourceType() === 'media' && reason === 'net::ERR_ABORTED') return;
    problems.failedRequests.push(`${request.url()} (${request.resourceType()}): ${reason}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) problems.failedRequests.push(`${response.url()}: HTTP ${response.status()}`);
  });
  return problems;
}

interface VideoState {
  src: string;
  readyState: number;
  duration: number;
  error: number | null;
  poster: string;
}

/** Waits (a few seconds at most) until every <video> has its metadata, then reports each one. */
async function videoStates(page: Page): Promise<VideoState[]> {
  await page
    .waitForFunction(
      () => {
        const videos = [...document.querySelectorAll('video')];
        return videos.length > 0 && videos.every((v) => v.error !== null || (v.readyState >= 1 && v.duration > 0));
      },
      undefined,
      { timeout: 10_000 },
    )
    .catch(() => undefined);
  return page.evaluate(() =>
    [...document.querySelectorAll('video')].map((v) => ({
      src: v.currentSrc,
      readyState: v.readyState,
      duration: v.duration,
      error: v.error?.code ?? null,
      poster: v.poster,
    })),
  );
}

async function posterWidths(page: Page): Promise<number[]> {
  return page.evaluate(() =>
    Promise.all(
      [...document.querySelectorAll('video')].map(
        (v) =>
          new Promise<number>((done) => {
            const image = new Image();
            image.onload = () => done(image.naturalWidth);
            image.onerror = () => done(0);
            image.src = v.poster;
          }),
      ),
    ),
  );
}

/**
 * The page loads posters only; its player makes a <video> when a take is played. To check every
 * stored video at once, give each tile the element the player would (its src, its poster).
 */
async function mountVideos(page: Page): Promise<void> {
  await page.evaluate(() => {
    for (const tile of [...document.querySelectorAll('.take[data-video]')]) {
      const video = document.createElement('video');
      video.preload = 'metadata';
      video.poster = tile.querySelector('img')?.src ?? '';
      video.src = tile.getAttribute('data-video') ?? '';
      tile.querySelector('.frame')?.appendChild(video);
    }
  });
}

async function assertReportPage(page: Page, problems: PageProblems): Promise<void> {
  assert.equal(await page.evaluate(() => document.querySelectorAll('video').length), 0, 'no video loads before one is played');
  await mountVideos(page);
  const states = await videoStates(page);
  assert.equal(states.length, VIDEOS.length, 'one <video> per succeeded item');
  for (const s of states) {
    assert.equal(s.error, null, `${s.src} has a media error ${s.error}`);
    assert.ok(s.readyState >= 1, `${s.src} loaded no metadata (readyState ${s.readyState})`);
    assert.ok(s.duration > 1.5 && s.duration < 2.5, `${s.src} duration ${s.duration}`);
    assert.match(s.poster, /\/posters\/.+\.jpg$/, `${s.src} has an extracted poster, not a placeholder`);
  }
  const widths = await posterWidths(page);
  assert.deepEqual(
    widths,
    VIDEOS.map(() => 480),
    'every poster loads, 480 px wide',
  );

  const failures = await page.$$eval('#failures li.problem', (items) =>
    items.map((li) => ({
      state: li.getAttribute('data-state'),
      text: (li.textContent ?? '').replace(/\s+/g, ' '),
    })),
  );
  assert.deepEqual(
    failures.map((f) => f.state),
    ['failed', 'timed_out', 'unknown'],
  );
  assert.match(failures[0]?.text ?? '', /content_policy.*The prompt was rejected <by policy>\./);
  assert.match(failures[1]?.text ?? '', /timeout.*Still rendering after 30m\./);
  assert.match(failures[2]?.text ?? '', /create_outcome_unknown.*Connection reset after the request was sent\./);

  // The prompt with markup is shown as text and never ran.
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  const promptText = await page.$$eval('.group .gprompt', (ps) => ps.map((p) => p.textContent ?? ''));
  assert.ok(promptText.includes('bars <script>window.__pwned = 1</script> & "quotes"'));
  assert.equal(await page.$$eval('body script', (s) => s.length), 1, 'only the page s own script');

  const counts = await page.$$eval('.stats .stat[data-state]', (items) =>
    Object.fromEntries(items.map((li) => [li.getAttribute('data-state'), Number(li.querySelector('b')?.textContent)])),
  );
  assert.deepEqual(counts, { succeeded: 3, failed: 1, timed_out: 1, canceled: 0, unknown: 1 });

  assert.deepEqual(problems.consoleErrors, [], 'no console errors');
  assert.deepEqual(problems.failedRequests, [], 'no failed requests');
}

void describe('report.html in Chromium', { timeout: 120_000 }, () => {
  let dir: string;
  let profile: string;
  let server: StaticServer;
  let context: BrowserContext;
  let reportPath: string;

  before(async () => {
    assertChromium();
    dir = await mkdtemp(join(tmpdir(), 'reelflow-report-'));
    profile = await mkdtemp(join(tmpdir(), 'reelflow-chromium-'));
    await Promise.all(VIDEOS.map((v) => makeVideo(dir, v)));
    const rows = await manifestRows(dir);
    await writeFile(join(dir, 'manifest.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const result = await writeReport({ job: 'demo <launch> & co', rows, outputDir: dir, jobFile: 'jobs/demo.yaml' });
    assert.equal(result.path, join(dir, 'report.html'));
    assert.equal(result.ffmpeg, true);
    assert.equal(result.posters, VIDEOS.length);
    reportPath = result.path;
    server = await serveDirectory(dir);
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 800 },
    });
  });

  after(async () => {
    await context?.close();
    await server?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  void it('Debian Chromium plays the H.264 MP4s (frames decoded, time advances)', async () => {
    const page = await context.newPage();
    await page.goto(`${server.url}/report.html`, { waitUntil: 'load' });
    await mountVideos(page);
    const support = await page.evaluate(() => ({
      h264: document.createElement('video').canPlayType('video/mp4; codecs="avc1.64001E"'),
      aac: document.createElement('video').canPlayType('video/mp4; codecs="mp4a.40.2"'),
    }));
    assert.notEqual(support.h264, '', 'this Chromium build cannot play H.264');
    assert.notEqual(support.aac, '', 'this Chromium build cannot play AAC');
    const played = await page.evaluate(() =>
      Promise.all(
        [...document.querySelectorAll('video')].map(async (v) => {
          v.muted = true;
          await v.play();
          // Until time has advanced, within a bound: on a loaded machine (CI's two cores) a fixed short
          // wait was sometimes not enough for the first frames of every video at once.
          const end = Date.now() + 20_000;
          while ((v.currentTime <= 0.3 || v.getVideoPlaybackQuality().totalVideoFrames === 0) && !v.error && Date.now() < end) {
            await new Promise((r) => setTimeout(r, 50));
          }
          v.pause();
          return {
            src: v.currentSrc,
            time: v.currentTime,
            frames: v.getVideoPlaybackQuality().totalVideoFrames,
            error: v.error?.code ?? null,
          };
        }),
      ),
    );
    await page.close();
    for (const p of played) {
      assert.equal(p.error, null, `${p.src}: media error`);
      assert.ok(p.time > 0.2, `${p.src}: playback did not advance (${p.time} s)`);
      assert.ok(p.frames > 0, `${p.src}: no frame decoded`);
    }
  });

  void it('served over http: videos, posters, failures, no errors; screenshot', async () => {
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(`${server.url}/report.html`, { waitUntil: 'load' });
    await assertReportPage(page, problems);
    // Every request stayed on the loopback server (the CSP forbids anything else).
    assert.ok(server.requests.length >= 1 + VIDEOS.length, `requests: ${server.requests.join(', ')}`);
    await mkdir(resolve(SCREENSHOT, '..'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await page.close();
  });

  void it('the page s own player: a click plays the take, the video loading only then', async () => {
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(`${server.url}/report.html`, { waitUntil: 'load' });
    const before = server.requests.filter((r) => r.includes('.mp4') && !r.includes('/posters/')).length;
    await page.locator('.take[data-video]').first().click();
    await page.waitForFunction(
      () => {
        const v = [...document.querySelectorAll('video')][0];
        return v !== undefined && v.currentTime > 0.2;
      },
      undefined,
      { timeout: 20_000 },
    );
    assert.ok(
      server.requests.filter((r) => r.includes('.mp4') && !r.includes('/posters/')).length > before,
      'the video was fetched on play',
    );
    assert.deepEqual(problems.consoleErrors, []);
    await page.close();
  });

  void it('opened from disk (file://) works the same', async () => {
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(pathToFileURL(reportPath).href, { waitUntil: 'load' });
    await assertReportPage(page, problems);
    await page.close();
  });

  void it('reuses posters newer than their video and remakes stale ones', async () => {
    const rows = await manifestRows(dir);
    const poster = join(dir, 'posters', `${VIDEOS[0]?.file}.jpg`);
    const before = (await stat(poster)).mtimeMs;
    await writeReport({ job: 'again', rows, outputDir: dir });
    assert.equal((await stat(poster)).mtimeMs, before, 'fresh poster reused');
    const old = new Date(Date.now() - 3_600_000);
    await utimes(poster, old, old);
    const result = await writeReport({ job: 'again', rows, outputDir: dir });
    assert.ok((await stat(poster)).mtimeMs > old.getTime(), 'stale poster extracted again');
    assert.equal(result.posters, VIDEOS.length);
  });
});
