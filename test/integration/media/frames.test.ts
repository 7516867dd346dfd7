// media/frames.ts on real ffmpeg: the frame a chained shot starts from is the video's exact last
// decoded frame (checked against every frame decoded), and a frame at a time is the one shown then.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FrameError, frameAt, lastFrame } from '../../../media/frames';
import { scratchPaths } from '../../support/storage';

const freshDir = scratchPaths('reelflow-frames-');

/**
 * A clip whose frames all differ (a moving test pattern and a frame counter), H.264 with B-frames
 * and a key frame only at the start (unless `gop` says how many frames apart), so the last frame is
 * neither a key frame nor the last stored. `soundSeconds`: a sound track that long beside it.
 */
function clip(dir: string, seconds: number, fps: number, more: { gop?: number; soundSeconds?: number } = {}): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'clip.mp4');
  execFileSync('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=160x120:rate=${fps}:duration=${seconds}`,
    ...(more.soundSeconds ? ['-f', 'lavfi', '-i', `sine=duration=${more.soundSeconds}`, '-c:a', 'aac'] : []),
    '-c:v',
    'libx264',
    '-g',
    String(more.gop ?? 1000),
    '-bf',
    '3',
    '-pix_fmt',
    'yuv420p',
    path,
  ]);
  return path;
}

/** md5 of each decoded frame as rgb24, in order (ffmpeg's framemd5 muxer). */
function frameMd5s(path: string): string[] {
  const out = execFileSync(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      path,
      '-map',
      '0:v:0',
      '-fps_mode',
      'passthrough',
      '-pix_fmt',
      'rgb24',
      '-f',
      'framemd5',
      '-',
    ],
    {
      encoding: 'utf8',
    },
  );
  return out
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.split(',').at(-1)!.trim());
}

describe('media/frames.ts', () => {
  it('lastFrame is the last of every decoded frame, byte for byte once decoded', async () => {
    const dir = freshDir();
    const video = clip(dir, 3, 25);
    const all = frameMd5s(video);
    assert.equal(all.length, 75);
    assert.equal(new Set(all).size, all.length, 'every frame of the clip differs');
    const png = join(dir, 'last.png');
    await lastFrame(video, png);
    assert.deepEqual(frameMd5s(png), [all.at(-1)]);
  });

  it('lastFrame decodes only the last second where key frames allow, and the whole clip when sound outlasts the video', async () => {
    for (const [name, more] of [
      ['key frames every 10', { gop: 10 }],
      ['sound 3 s past the video', { gop: 10, soundSeconds: 6 }],
    ] as const) {
      const dir = freshDir();
      const video = clip(dir, 3, 25, more);
      const all = frameMd5s(video);
      assert.equal(all.length, 75, name);
      const png = join(dir, 'last.png');
      await lastFrame(video, png);
      assert.deepEqual(frameMd5s(png), [all.at(-1)], name);
    }
  });

  it('frameAt gives the frame shown at that time, the first frame at 0', async () => {
    const dir = freshDir();
    const video = clip(dir, 3, 25);
    const all = frameMd5s(video);
    const at = join(dir, 'at.png');
    await frameAt(video, 1.2, at);
    assert.deepEqual(frameMd5s(at), [all[30]]);
    await frameAt(video, 0, at);
    assert.deepEqual(frameMd5s(at), [all[0]]);
  });

  it('refuses a time past the end and a file that is not a video', async () => {
    const dir = freshDir();
    const video = clip(dir, 1, 10);
    await assert.rejects(frameAt(video, 5, join(dir, 'late.png')), FrameError);
    await assert.rejects(frameAt(video, -1, join(dir, 'neg.png')), /0 s or more/);
    const text = join(dir, 'not-a-video.mp4');
    execFileSync('sh', ['-c', `echo hello > ${text}`]);
    await assert.rejects(lastFrame(text, join(dir, 'x.png')), FrameError);
  });
});
