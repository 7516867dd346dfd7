// The simulator plays along with chains of shots (docs/simulator.md "Frames and chains"): frame roles
// are taken, a first frame is drawn into the video's first second, Seedance's refusal of frames mixed
// with reference media comes before any task, and the new-api profile hands back the video's exact
// last frame as content.last_frame_url in the upstream task; new-api v0.10.0 passes none of it on.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SEEDANCE_MIX_REFUSAL } from '../../../sim/frames';
import { AUTH, createGeneral, JSON_AUTH, json, ok, raw, waitFinal, withSim } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'sim-frames-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const ffmpeg = (args: string[], input?: Buffer): Buffer =>
  execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', ...args], { input, maxBuffer: 64 * 1024 * 1024 });

/** A solid red 640x360 PNG. */
const RED = ffmpeg(['-f', 'lavfi', '-i', 'color=c=red:size=640x360', '-frames:v', '1', '-f', 'image2', '-c:v', 'png', '-']);
const redUrl = `data:image/png;base64,${RED.toString('base64')}`;

/** The mean colour of the frame at `at` seconds, as [r, g, b]. */
function colourAt(mp4: Buffer, at: number): number[] {
  const path = join(dir, `v-${Math.random().toString(36).slice(2)}.mp4`);
  writeFileSync(path, mp4);
  return [...ffmpeg(['-ss', String(at), '-i', path, '-frames:v', '1', '-vf', 'scale=1:1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'])];
}

/** Every frame's pixels of a PNG or video's last frame, as raw RGB (to compare pictures, not encodings). */
function rgbOfPng(png: Buffer): Buffer {
  return ffmpeg(['-i', 'pipe:0', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], png);
}
function lastFrameRgb(mp4: Buffer): Buffer {
  const path = join(dir, `l-${Math.random().toString(36).slice(2)}.mp4`);
  writeFileSync(path, mp4);
  const frames = Number(
    execFileSync('ffprobe', [
      '-v',
      'error',
      '-count_frames',
      '-select_streams',
      'v:0',
      '-show_entries',
      'stream=nb_read_frames',
      '-of',
      'csv=p=0',
      path,
    ])
      .toString()
      .trim(),
  );
  return ffmpeg([
    '-i',
    path,
    '-vf',
    `select=eq(n\\,${frames - 1})`,
    '-vsync',
    '0',
    '-frames:v',
    '1',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    '-',
  ]);
}

const firstFrameCreate = (prompt: string, extra: Record<string, unknown> = {}) => ({
  model: 'doubao-seedance-2-0-260128',
  prompt,
  seconds: '3',
  metadata: {
    resolution: '480p',
    ratio: '16:9',
    content: [{ type: 'image_url', image_url: { url: redUrl }, role: 'first_frame' }],
    ...extra,
  },
});

async function download(url: string, headers: Record<string, string> = {}): Promise<Buffer> {
  const r = ok(await raw(url, { headers }));
  assert.equal(r.status, 200, `${url}: ${r.body.toString().slice(0, 200)}`);
  return r.body;
}

describe('simulator: frames', () => {
  it('draws the first frame into the first second, and the default profile returns no last frame', async () => {
    await withSim({ renderMs: 100 }, async (sim) => {
      const base = sim.urls[0] as string;
      const id = await createGeneral(base, firstFrameCreate('a keeper at the door', { return_last_frame: true }));
      const done = await waitFinal(base, id);
      assert.equal(done['status'], 'SUCCESS');
      assert.equal(done['data'], undefined, 'the seed gateway passes no upstream task, so no last frame');
      const mp4 = await download(String(done['result_url']), AUTH);
      const [r0 = 0, g0 = 0, b0 = 0] = colourAt(mp4, 0.3);
      assert.ok(r0 > 200 && g0 < 60 && b0 < 60, `the first second shows the red first frame, got ${[r0, g0, b0].join(',')}`);
      const [r2 = 0, g2 = 0, b2 = 0] = colourAt(mp4, 2);
      assert.ok(!(r2 > 200 && g2 < 60 && b2 < 60), `after it the request's own picture, got ${[r2, g2, b2].join(',')}`);
      // The same request without the frame is another video.
      const plain = await createGeneral(base, {
        ...firstFrameCreate('a keeper at the door'),
        metadata: { resolution: '480p', ratio: '16:9' },
      });
      const plainMp4 = await download(String((await waitFinal(base, plain))['result_url']), AUTH);
      assert.notDeepEqual(plainMp4, mp4);
    });
  });

  it("draws the openai protocol's input_reference image into the first second, as a first frame", async () => {
    await withSim({ renderMs: 100 }, async (sim) => {
      const base = sim.urls[0] as string;
      const create = async (image?: Buffer): Promise<Buffer> => {
        const form = new FormData();
        for (const [k, v] of Object.entries({
          model: 'veo-3.1-fast-generate-001',
          prompt: 'a keeper at the door',
          seconds: '4',
          size: '640x360',
        }))
          form.append(k, v);
        if (image) form.append('input_reference', new Blob([image], { type: 'image/png' }), 'first.png');
        const created = (await (await fetch(`${base}/v1/videos`, { method: 'POST', headers: AUTH, body: form })).json()) as { id: string };
        for (let i = 0; i < 500; i++) {
          const v = (await (await fetch(`${base}/v1/videos/${created.id}`, { headers: AUTH })).json()) as { status: string };
          if (v.status === 'completed') return download(`${base}/v1/videos/${created.id}/content`, AUTH);
          assert.notEqual(v.status, 'failed');
          await new Promise((r) => setTimeout(r, 20));
        }
        assert.fail('not completed');
      };
      const mp4 = await create(RED);
      const [r0 = 0, g0 = 0, b0 = 0] = colourAt(mp4, 0.3);
      assert.ok(r0 > 200 && g0 < 60 && b0 < 60, `the first second shows the red input_reference, got ${[r0, g0, b0].join(',')}`);
      const [r2 = 0, g2 = 0, b2 = 0] = colourAt(mp4, 2);
      assert.ok(!(r2 > 200 && g2 < 60 && b2 < 60), `after it the request's own picture, got ${[r2, g2, b2].join(',')}`);
      const [rp = 0, gp = 0, bp = 0] = colourAt(await create(), 0.3);
      assert.ok(!(rp > 200 && gp < 60 && bp < 60), `without it no red first second, got ${[rp, gp, bp].join(',')}`);
      // A PNG's signature before bytes no decoder reads (what some tests send): the video is made
      // without it, in the render's time. Looped undecoded, it held ffmpeg, and the task, forever.
      const fake = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(20_000, 7)]);
      const [rf = 0, gf = 0, bf = 0] = colourAt(await create(fake), 0.3);
      assert.ok(!(rf > 200 && gf < 60 && bf < 60), `an undecodable image is not drawn, got ${[rf, gf, bf].join(',')}`);
    });
  });

  it("refuses Seedance frames mixed with reference media with Seedance's 400, before any task", async () => {
    await withSim({ renderMs: 100 }, async (sim) => {
      const base = sim.urls[0] as string;
      const body = firstFrameCreate('mixed');
      body.metadata.content.push({ type: 'audio_url', audio_url: { url: 'https://x/beat.mp3' }, role: 'reference_audio' } as never);
      const r = ok(await raw(`${base}/v1/video/generations`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify(body) }));
      assert.equal(r.status, 400);
      assert.equal((JSON.parse(r.body.toString()) as { message: string }).message, SEEDANCE_MIX_REFUSAL);
      assert.equal(sim.stats().tasksCreated, 0);
      // A last_frame beside a first_frame is fine; a frame role on a video is not.
      const both = firstFrameCreate('both frames');
      both.metadata.content.push({ type: 'image_url', image_url: { url: 'https://x/end.png' }, role: 'last_frame' });
      assert.equal(
        ok(await raw(`${base}/v1/video/generations`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify(both) })).status,
        200,
      );
      const wrong = {
        model: 'doubao-seedance-2-0-260128',
        prompt: 'p',
        metadata: { content: [{ type: 'video_url', video_url: { url: 'https://x/a.mp4' }, role: 'first_frame' }] },
      };
      assert.equal(
        ok(await raw(`${base}/v1/video/generations`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify(wrong) })).status,
        400,
      );
    });
  });

  it("new-api: the upstream task in data carries content.last_frame_url, the video's exact last frame", async () => {
    await withSim({ profile: 'new-api', renderMs: 100, refreshMs: 0 }, async (sim) => {
      const base = sim.urls[0] as string;
      const id = await createGeneral(base, firstFrameCreate('the lamp turns', { return_last_frame: true }));
      const done = await waitFinal(base, id);
      const upstream = done['data'] as { content: { video_url: string; last_frame_url: string } };
      assert.match(upstream.content.last_frame_url, /\/frames\/.+-last\.png\?expires=\d+&signature=[0-9a-f]{32}$/);
      const png = await download(upstream.content.last_frame_url);
      assert.deepEqual(png.subarray(0, 8), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      const mp4 = await download(String(done['result_url']));
      assert.ok(rgbOfPng(png).equals(lastFrameRgb(mp4)), 'the PNG is the last decoded frame of the video');
      // A forged or expired address is refused like a video's.
      assert.equal(ok(await raw(upstream.content.last_frame_url.replace(/signature=[0-9a-f]/, 'signature=x'))).status, 403);
      // A task that did not ask has none, and its answer is as before (no upstream task).
      const plain = await createGeneral(base, firstFrameCreate('no frame asked'));
      assert.equal((await waitFinal(base, plain))['data'], undefined);
    });
  });

  it('new-api v0.10.0 sends its Seedance upstream only the prompt: no frame is drawn, no last frame comes back', async () => {
    await withSim({ profile: 'new-api-0.10', renderMs: 100, refreshMs: 50 }, async (sim) => {
      const base = sim.urls[0] as string;
      const r = json(
        await raw(`${base}/v1/video/generations`, {
          method: 'POST',
          headers: JSON_AUTH,
          body: JSON.stringify(firstFrameCreate('through v0.10', { return_last_frame: true })),
        }),
      ) as { task_id: string };
      const done = await waitFinal(base, r.task_id);
      const upstream = done['data'] as { content: Record<string, unknown> };
      assert.deepEqual(Object.keys(upstream.content), ['video_url']);
      const mp4 = await download(String(upstream.content['video_url']));
      const [red = 0, g = 0, b = 0] = colourAt(mp4, 0.3);
      assert.ok(!(red > 200 && g < 60 && b < 60), 'the frame never reached the upstream');
    });
  });
});
