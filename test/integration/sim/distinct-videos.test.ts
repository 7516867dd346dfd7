// Each simulated video is its own request's video (docs/simulator.md): the size follows the ratio and
// resolution (general protocol) or `size` (OpenAI protocol), the length the requested seconds, and
// two prompts (or two seeds) give two different files while the same request gives the same file.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SAMPLE_MP4 } from '../../../sim/mp4';
import type { SimOptionsExt } from '../../../sim/index';
import { AUTH, createGeneral, ok, raw, sleep, waitFinal, withSim } from './helpers';
import { probeVideoSize } from '../../support/media';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

interface Probe {
  width: number;
  height: number;
  seconds: number;
}

function probe(dir: string, body: Buffer): Probe {
  const file = join(dir, `probe-${sha256(body).slice(0, 12)}.mp4`);
  writeFileSync(file, body);
  return probeVideoSize(file);
}

async function generalVideo(base: string, prompt: string, seconds: string, metadata: Record<string, unknown>): Promise<Buffer> {
  const id = await createGeneral(base, { model: 'seedance-1-0-pro-250528', prompt, seconds, metadata });
  await waitFinal(base, id);
  const r = ok(await raw(`${base}/v1/videos/${id}/content`, { headers: AUTH, timeoutMs: 120_000 }));
  assert.equal(r.status, 200, r.body.toString().slice(0, 200));
  return r.body;
}

async function openaiVideo(base: string, fields: Record<string, string>): Promise<Buffer> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const created = (await (await fetch(`${base}/v1/videos`, { method: 'POST', headers: AUTH, body: form })).json()) as { id: string };
  for (let i = 0; i < 500; i++) {
    const v = (await (await fetch(`${base}/v1/videos/${created.id}`, { headers: AUTH })).json()) as { status: string };
    if (v.status === 'completed') break;
    await sleep(10);
  }
  const r = ok(await raw(`${base}/v1/videos/${created.id}/content`, { headers: AUTH, timeoutMs: 120_000 }));
  assert.equal(r.status, 200);
  return r.body;
}

async function withCache<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'sim-distinct-'));
  try {
    return await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('general protocol: size from resolution and ratio, length from seconds; prompts and seeds give distinct files', async () => {
  await withCache(async (dir) => {
    await withSim({ renderMs: 0, cacheDir: join(dir, 'cache') }, async (sim) => {
      assert.equal(sim.ffmpeg, true);
      const base = sim.urls[0] as string;
      const wide = await generalVideo(base, 'a harbor at dawn', '5', { resolution: '720p', ratio: '16:9', seed: 7 });
      const tall = await generalVideo(base, 'rain on a window', '3', { resolution: '720p', ratio: '9:16', seed: 7 });
      assert.deepEqual(probe(dir, wide), { width: 1280, height: 720, seconds: 5 });
      assert.deepEqual(probe(dir, tall), { width: 720, height: 1280, seconds: 3 });

      // Same prompt, ratio and seconds as `wide`: only the prompt or the seed changes.
      const otherPrompt = await generalVideo(base, 'wind over a dune', '5', { resolution: '720p', ratio: '16:9', seed: 7 });
      const otherSeed = await generalVideo(base, 'a harbor at dawn', '5', { resolution: '720p', ratio: '16:9', seed: 8 });
      const again = await generalVideo(base, 'a harbor at dawn', '5', { resolution: '720p', ratio: '16:9', seed: 7 });
      assert.notEqual(sha256(otherPrompt), sha256(wide), 'two prompts, two files');
      assert.notEqual(sha256(otherSeed), sha256(wide), 'two seeds, two files');
      assert.equal(sha256(again), sha256(wide), 'the same request, the same file');
      assert.deepEqual(probe(dir, otherSeed), { width: 1280, height: 720, seconds: 5 });
    });
  });
});

test('OpenAI protocol: size and seconds as asked; the same request from a fresh simulator is the same file', async () => {
  await withCache(async (dir) => {
    const opts: SimOptionsExt = { renderMs: 0, cacheDir: join(dir, 'cache') };
    const first = await withSim(opts, async (sim) => {
      const base = sim.urls[0] as string;
      const tall = await openaiVideo(base, { model: 'veo-3.1-fast-generate-001', prompt: 'a paper boat', seconds: '8', size: '360x640' });
      const wide = await openaiVideo(base, { model: 'veo-3.1-fast-generate-001', prompt: 'a paper plane', seconds: '4', size: '640x360' });
      assert.deepEqual(probe(dir, tall), { width: 360, height: 640, seconds: 8 });
      assert.deepEqual(probe(dir, wide), { width: 640, height: 360, seconds: 4 });
      assert.notEqual(sha256(tall), sha256(wide));
      return sha256(tall);
    });
    // A new simulator without the disk cache renders it again: the bytes do not depend on the run.
    rmSync(join(dir, 'cache'), { recursive: true, force: true });
    const second = await withSim(opts, async (sim) =>
      sha256(
        await openaiVideo(sim.urls[0] as string, {
          model: 'veo-3.1-fast-generate-001',
          prompt: 'a paper boat',
          seconds: '8',
          size: '360x640',
        }),
      ),
    );
    assert.equal(second, first);
  });
});

test('videos padded to videoBytes stay distinct and keep the free box at the end', async () => {
  await withCache(async (dir) => {
    await withSim({ renderMs: 0, cacheDir: join(dir, 'cache'), videoBytes: 2 * 1024 * 1024 }, async (sim) => {
      const base = sim.urls[0] as string;
      const a = await openaiVideo(base, { model: 'veo-3.1-fast-generate-001', prompt: 'first padded', seconds: '2', size: '320x240' });
      const b = await openaiVideo(base, { model: 'veo-3.1-fast-generate-001', prompt: 'second padded', seconds: '2', size: '320x240' });
      assert.equal(a.length, 2 * 1024 * 1024);
      assert.equal(b.length, 2 * 1024 * 1024);
      assert.notEqual(sha256(a), sha256(b));
      assert.deepEqual(probe(dir, a), { width: 320, height: 240, seconds: 2 });
    });
  });
});

test('ffmpeg runs one at a time, creates do not queue a render each, and the disk cache stays bounded', async () => {
  await withCache(async (dir) => {
    // A wrapper that logs each ffmpeg run's start and end, so overlap and count can be checked.
    const log = join(dir, 'runs.log');
    const wrapper = join(dir, 'ffmpeg');
    writeFileSync(
      wrapper,
      `#!/bin/sh\necho "start $(date +%s%N)" >> '${log}'\n/usr/bin/ffmpeg "$@"\nrc=$?\necho "end $(date +%s%N)" >> '${log}'\nexit $rc\n`,
    );
    chmodSync(wrapper, 0o755);
    const cache = join(dir, 'cache');
    await withSim({ renderMs: 60_000, cacheDir: cache, ffmpegPath: wrapper, videoCacheFiles: 3 }, async (sim) => {
      const base = sim.urls[0] as string;
      for (let i = 0; i < 40; i++) {
        await createGeneral(base, {
          model: 'seedance-1-0-pro-250528',
          prompt: `burst ${i}`,
          seconds: '1',
          metadata: { resolution: '480p' },
        });
      }
      await sleep(3000);
      const lines = () => readFileSync(log, 'utf8').trim().split('\n');
      const starts = lines().filter((l) => l.startsWith('start')).length;
      assert.ok(starts <= 3, `40 creates started ${starts} ffmpeg runs; at most a few are prepared ahead`);
      // A render prepared ahead finishes in the background; on a loaded machine it can outlast the
      // wait above, and the next simulator's runs would overlap it (one at a time is per simulator).
      for (let waited = 0; lines().filter((l) => l.startsWith('end')).length < starts && waited < 60_000; waited += 100) await sleep(100);
    });
    await withSim({ renderMs: 0, cacheDir: cache, ffmpegPath: wrapper, videoCacheFiles: 3 }, async (sim) => {
      const base = sim.urls[0] as string;
      const bodies = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          openaiVideo(base, { model: 'veo-3.1-fast-generate-001', prompt: `parallel ${i}`, seconds: '1', size: '160x120' }),
        ),
      );
      assert.equal(new Set(bodies.map(sha256)).size, 5);
    });
    const events = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    let running = 0;
    let most = 0;
    for (const [kind] of events) {
      running += kind === 'start' ? 1 : -1;
      most = Math.max(most, running);
    }
    assert.equal(most, 1, 'never two ffmpeg processes at once');
    const kept = readdirSync(cache).filter((f) => f.endsWith('.mp4'));
    assert.ok(kept.length <= 3, `disk cache holds ${kept.length} videos: ${kept.join(', ')}`);
  });
});

test('without ffmpeg: the shipped sample, made distinct by a trailing free box that names the request', async () => {
  await withSim({ renderMs: 0, ffmpegPath: null }, async (sim) => {
    assert.equal(sim.ffmpeg, false);
    const base = sim.urls[0] as string;
    const a = await generalVideo(base, 'sample one', '5', { seed: 1 });
    const b = await generalVideo(base, 'sample two', '5', { seed: 1 });
    const a2 = await generalVideo(base, 'sample one', '5', { seed: 1 });
    const sample = readFileSync(SAMPLE_MP4);
    assert.deepEqual(a.subarray(0, sample.length), sample);
    assert.notEqual(sha256(a), sha256(b));
    assert.equal(sha256(a), sha256(a2));
    const box = a.subarray(sample.length);
    assert.equal(box.subarray(4, 8).toString('latin1'), 'free');
    assert.equal(box.readUInt32BE(0), box.length);
    assert.match(box.toString('utf8'), /shipped sample.*1280x720.*5 s.*seed 1/s);
  });
});

test("shared videos (the benchmarks' option): one video per size and length, whatever the prompt", async () => {
  await withCache(async (dir) => {
    await withSim({ renderMs: 0, cacheDir: join(dir, 'cache'), distinctVideos: false }, async (sim) => {
      const base = sim.urls[0] as string;
      const a = await openaiVideo(base, { model: 'veo-3.1-fast-generate-001', prompt: 'shared one', seconds: '2', size: '320x240' });
      const b = await openaiVideo(base, { model: 'veo-3.1-fast-generate-001', prompt: 'shared two', seconds: '2', size: '320x240' });
      assert.equal(sha256(a), sha256(b));
      assert.deepEqual(probe(dir, a), { width: 320, height: 240, seconds: 2 });
    });
  });
});
