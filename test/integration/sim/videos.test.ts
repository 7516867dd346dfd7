import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SAMPLE_MP4 } from '../../../sim/mp4';
import { AUTH, ok, raw, sleep, withSim } from './helpers';
import { probeVideoSize } from '../../support/media';

async function createVideo(base: string, fields: Record<string, string>, withFile = true): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (withFile) form.append('input_reference', new Blob([Buffer.from('\x89PNG fake image')], { type: 'image/png' }), 'ref.png');
  return fetch(`${base}/v1/videos`, { method: 'POST', headers: AUTH, body: form });
}

async function waitCompleted(base: string, id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 500; i++) {
    const v = (await (await fetch(`${base}/v1/videos/${id}`, { headers: AUTH })).json()) as Record<string, unknown>;
    if (v['status'] === 'completed' || v['status'] === 'failed') return v;
    await sleep(10);
  }
  throw new Error('not completed');
}

test('multipart create, unwrapped video object, statuses and progress as numbers', async () => {
  await withSim({ renderMs: 300 }, async (sim) => {
    const base = sim.urls[0] as string;
    const r = await createVideo(base, {
      model: 'veo-3.1-fast-generate-001',
      prompt: 'a boat',
      seconds: '8',
      size: '1280x720',
      style: 'noir',
    });
    assert.equal(r.status, 200);
    const v = (await r.json()) as Record<string, unknown>;
    assert.equal(v['object'], 'video');
    assert.equal(v['status'], 'queued');
    assert.equal(v['progress'], 0);
    assert.equal(v['seconds'], '8');
    assert.equal(v['size'], '1280x720');
    assert.equal(v['error'], null);
    assert.equal(v['completed_at'], null);
    const seen = new Set<string>();
    let last: Record<string, unknown> = v;
    let polls = 0;
    for (let i = 0; i < 300 && last['status'] !== 'completed'; i++) {
      polls++;
      last = (await (await fetch(`${base}/v1/videos/${String(v['id'])}`, { headers: AUTH })).json()) as Record<string, unknown>;
      seen.add(String(last['status']));
      assert.equal(typeof last['progress'], 'number');
      await sleep(5);
    }
    assert.deepEqual(
      [...seen].filter((s) => !['queued', 'in_progress', 'completed'].includes(s)),
      [],
    );
    assert.ok(seen.has('in_progress') && seen.has('completed'));
    assert.equal(last['progress'], 100);
    assert.equal(typeof last['completed_at'], 'number');
    assert.equal(sim.stats().pollsByTask[String(v['id'])], polls);
    assert.deepEqual(sim.stats().createsByPrompt, { 'a boat': 1 });
  });
});

test('multipart create rejects bad fields with OpenAI-style 400s', async () => {
  await withSim({}, async (sim) => {
    const base = sim.urls[0] as string;
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ model: 'veo-3.1-fast-generate-001' }, /prompt is required/],
      [{ prompt: 'x' }, /model is required/],
      [{ model: 'veo-3.1-fast-generate-001', prompt: 'x', seconds: '4.5' }, /string of digits/],
      [{ model: 'veo-3.1-fast-generate-001', prompt: 'x', size: 'big' }, /expected WxH/],
    ];
    for (const [fields, re] of cases) {
      const r = await createVideo(base, fields);
      assert.equal(r.status, 400);
      const e = (await r.json()) as { error: { message: string; type: string } };
      assert.equal(e.error.type, 'invalid_request_error');
      assert.match(e.error.message, re);
    }
    const broken = ok(
      await raw(`${base}/v1/videos`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'multipart/form-data; boundary=zzz' },
        body: 'garbage',
      }),
    );
    assert.equal(broken.status, 400);
    assert.match(broken.body.toString(), /invalid multipart body/);
    const num = ok(
      await raw(`${base}/v1/videos`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'veo-3.1-fast-generate-001', prompt: 'x', seconds: 8 }),
      }),
    );
    assert.equal(num.status, 400);
    assert.equal(sim.stats().tasksCreated, 0);
  });
});

test('content download: real MP4 of the requested duration, padded with a free box, ETag, Range, 416', async () => {
  const cache = mkdtempSync(join(tmpdir(), 'sim-cache-'));
  try {
    await withSim({ renderMs: 0, videoBytes: 3 * 1024 * 1024, cacheDir: cache }, async (sim) => {
      const base = sim.urls[0] as string;
      const v = (await (
        await createVideo(base, { model: 'veo-3.1-fast-generate-001', prompt: 'p', seconds: '3', size: '320x240' })
      ).json()) as { id: string };
      await waitCompleted(base, v.id);
      const url = `${base}/v1/videos/${v.id}/content`;
      const full = ok(await raw(url, { headers: AUTH }));
      assert.equal(full.status, 200);
      assert.equal(full.headers['content-type'], 'video/mp4');
      assert.equal(full.headers['content-length'], String(3 * 1024 * 1024));
      assert.equal(full.headers['accept-ranges'], 'bytes');
      assert.equal(full.body.length, 3 * 1024 * 1024);
      const etag = String(full.headers['etag']);
      assert.match(etag, /^"[0-9a-f]+-[0-9a-f]+"$/);
      const file = join(cache, 'out.mp4');
      writeFileSync(file, full.body);
      const video = probeVideoSize(file);
      assert.equal(video.seconds, 3);
      assert.equal(video.width, 320);
      assert.equal(video.height, 240);
      // The last top-level box is `free` and runs to the end of the file.
      let pos = 0;
      let lastType = '';
      while (pos < full.body.length) {
        const size = full.body.readUInt32BE(pos);
        lastType = full.body.subarray(pos + 4, pos + 8).toString('latin1');
        assert.ok(size >= 8);
        pos += size;
      }
      assert.equal(pos, full.body.length);
      assert.equal(lastType, 'free');

      const part = ok(await raw(url, { headers: { ...AUTH, range: 'bytes=10-1009' } }));
      assert.equal(part.status, 206);
      assert.equal(part.headers['content-range'], `bytes 10-1009/${3 * 1024 * 1024}`);
      assert.deepEqual(part.body, full.body.subarray(10, 1010));
      const tail = ok(await raw(url, { headers: { ...AUTH, range: 'bytes=-100' } }));
      assert.deepEqual(tail.body, full.body.subarray(full.body.length - 100));
      const open = ok(await raw(url, { headers: { ...AUTH, range: `bytes=${full.body.length - 5}-` } }));
      assert.equal(open.body.length, 5);
      const bad = ok(await raw(url, { headers: { ...AUTH, range: `bytes=${full.body.length}-` } }));
      assert.equal(bad.status, 416);
      assert.equal(bad.headers['content-range'], `bytes */${full.body.length}`);
      const stale = ok(await raw(url, { headers: { ...AUTH, range: 'bytes=0-9', 'if-range': '"other"' } }));
      assert.equal(stale.status, 200);
      const same = ok(await raw(url, { headers: { ...AUTH, 'if-none-match': etag } }));
      assert.equal(same.status, 304);
      const head = ok(await raw(url, { method: 'HEAD', headers: AUTH }));
      assert.equal(head.headers['content-length'], String(full.body.length));
      assert.ok(sim.stats().bytesServed >= full.body.length + 1000 + 100 + 5);
    });
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test('content errors: 400 not completed with its status, 404 unknown task, 401 without key', async () => {
  await withSim({ renderMs: 60_000 }, async (sim) => {
    const base = sim.urls[0] as string;
    const v = (await (await createVideo(base, { model: 'veo-3.1-fast-generate-001', prompt: 'slow' })).json()) as { id: string };
    const r = ok(await raw(`${base}/v1/videos/${v.id}/content`, { headers: AUTH }));
    assert.equal(r.status, 400);
    assert.match(r.body.toString(), /Task is not completed yet, current status: NOT_START/);
    const nf = ok(await raw(`${base}/v1/videos/task_missing/content`, { headers: AUTH }));
    assert.equal(nf.status, 404);
    assert.match((JSON.parse(nf.body.toString()) as { error: { message: string } }).error.message, /^Task not found/);
    assert.equal(ok(await raw(`${base}/v1/videos/${v.id}/content`)).status, 401);
  });
});

test('a 1 GiB padded video streams without holding it in memory', async () => {
  await withSim({ renderMs: 0, videoBytes: 1024 ** 3 }, async (sim) => {
    const base = sim.urls[0] as string;
    const v = (await (
      await createVideo(base, { model: 'veo-3.1-fast-generate-001', prompt: 'big', seconds: '4', size: '320x240' })
    ).json()) as { id: string };
    await waitCompleted(base, v.id);
    const before = process.memoryUsage().rss;
    const res = await fetch(`${base}/v1/videos/${v.id}/content`, { headers: AUTH });
    assert.equal(res.headers.get('content-length'), String(1024 ** 3));
    let n = 0;
    let peak = before;
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      n += value.length;
      if ((n & 0xffffff) < value.length) peak = Math.max(peak, process.memoryUsage().rss);
    }
    assert.equal(n, 1024 ** 3);
    assert.ok(peak - before < 200 * 1024 * 1024, `rss grew by ${(peak - before) / 1e6} MB`);
  });
});

test('without ffmpeg the shipped sample MP4 is served, still padded to size', async () => {
  await withSim({ renderMs: 0, ffmpegPath: null, videoBytes: 100_000 }, async (sim) => {
    assert.equal(sim.ffmpeg, false);
    const base = sim.urls[0] as string;
    const v = (await (await createVideo(base, { model: 'veo-3.1-fast-generate-001', prompt: 'no ffmpeg' })).json()) as { id: string };
    await waitCompleted(base, v.id);
    const r = ok(await raw(`${base}/v1/videos/${v.id}/content`, { headers: AUTH }));
    assert.equal(r.body.length, 100_000);
    const sample = readFileSync(SAMPLE_MP4);
    assert.deepEqual(r.body.subarray(0, sample.length), sample);
    assert.equal(r.body.subarray(sample.length + 4, sample.length + 8).toString('latin1'), 'free');
  });
});
