// docs/files.md "A partial download is resumed only by the task that wrote it": a partial write is resumed only for the task that wrote it, and the whole stored
// file is checked as a video. The download activity runs with a real gateway client over real HTTP
// into a real local directory (MockActivityEnvironment gives it an activity context).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { closeActivityResources } from '../../../activities/context';
import { downloadVideo, partOwner, type DownloadedVideo } from '../../../activities/download';
import type { JobSettings } from '../../../jobfile/plan';
import { scripted } from '../../support/scripted-gateway';
import { acceptKeylessJobsInThisWorker } from '../../../activities/job-key-check';

// The jobs here are built by the test, with no starter's key fingerprint: this process carries them as a
// worker started with --accept-keyless-jobs does (docs/keys.md).
acceptKeylessJobsInThisWorker(true);

const KEY = 'sk-test-download-parts-0000';
const MP4_HEAD = Buffer.from('000000146674797069736f6d00000200', 'hex');
process.env.GATEWAY_API_KEY = KEY; // loopback: sent without asking (docs/keys.md)
after(() => closeActivityResources());

const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');
const videoOf = (fill: number, bytes = 200_000) => Buffer.concat([MP4_HEAD, Buffer.alloc(bytes - MP4_HEAD.length, fill)]);

function settings(baseUrl: string, dir: string): JobSettings {
  return {
    job: 'parts',
    gateway: { baseUrls: [baseUrl], apiKeyEnv: 'GATEWAY_API_KEY', requestTimeoutMs: 5_000 },
    concurrency: { maxInFlight: 1 },
    polling: { initialMs: 1_000, maxMs: 1_000, timeoutMs: 60_000 },
    retries: { create: 'safe', download: 1 },
    output: { storage: 'local', dir },
  };
}

/** Serves `videos` by task id (openai protocol), honouring Range; a task in `cut` sends half its bytes and breaks. */
function videoServer(videos: Record<string, Buffer>, cut: Set<string>) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const id = /\/v1\/videos\/([^/]+)\/content/.exec(req.url ?? '')?.[1] ?? '';
    const video = videos[id];
    if (!video) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such video"}}');
      return;
    }
    const from = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
    const headers: Record<string, string> = { 'content-type': 'video/mp4', 'content-length': String(video.length - from) };
    if (from > 0) headers['content-range'] = `bytes ${from}-${video.length - 1}/${video.length}`;
    res.writeHead(from > 0 ? 206 : 200, headers);
    if (!cut.has(id)) return void res.end(video.subarray(from));
    const half = Math.floor(video.length / 2);
    if (from < half) res.write(video.subarray(from, half));
    setTimeout(() => res.socket?.destroy(), 50);
  };
}

function download(url: string, dir: string, taskId: string, outputName: string): Promise<DownloadedVideo> {
  return new MockActivityEnvironment().run(downloadVideo, {
    settings: settings(url, dir),
    taskId,
    protocol: 'openai' as const,
    outputName,
  });
}

describe('partial writes belong to their task', () => {
  it("task 2 never resumes task 1's part: the stored video is task 2's alone", async () => {
    const videos = { task_1: videoOf(0xaa), task_2: videoOf(0xbb) };
    const gw = await scripted(videoServer(videos, new Set(['task_1'])));
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-parts-'));
    await assert.rejects(download(gw.url, dir, 'task_1', 'clip'), ApplicationFailure);
    assert.ok(existsSync(join(dir, 'clip.mp4.part')), "task 1's cut download left its part");

    const done = await download(gw.url, dir, 'task_2', 'clip');
    const stored = readFileSync(join(dir, 'clip.mp4'));
    assert.equal(sha(stored), sha(videos.task_2), 'the stored file is task 2 from its first byte to its last');
    assert.equal(done.sha256, sha(videos.task_2));
    const ranged = gw.seen.filter((s) => s.path.includes('task_2') && s.headers.range !== undefined);
    assert.deepEqual(ranged, [], 'task 2 was fetched from byte 0');
  });

  it('a planted part of HTML never becomes the start of a succeeded video', async () => {
    const video = videoOf(0xcc);
    const gw = await scripted(videoServer({ task_9: video }, new Set()));
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-parts-'));
    const html = Buffer.from(`<!doctype html><html><body>${'x'.repeat(4000 - 41)}</body></html>`);
    writeFileSync(join(dir, 'planted.mp4.part'), html);
    const done = await download(gw.url, dir, 'task_9', 'planted');
    const stored = readFileSync(join(dir, 'planted.mp4'));
    assert.equal(sha(stored), sha(video), 'the planted bytes are not in the stored file');
    assert.equal(done.sha256, sha(video));
  });

  it('the same task resumes its own part with Range', async () => {
    const video = videoOf(0xdd);
    const cut = new Set(['task_3']);
    const gw = await scripted(videoServer({ task_3: video }, cut));
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-parts-'));
    await assert.rejects(download(gw.url, dir, 'task_3', 'own'), ApplicationFailure);
    cut.clear();
    const done = await download(gw.url, dir, 'task_3', 'own');
    assert.equal(sha(readFileSync(join(dir, 'own.mp4'))), sha(video));
    assert.equal(done.sha256, sha(video));
    assert.ok(
      gw.seen.some((s) => s.headers.range !== undefined && s.headers.range !== 'bytes=0-'),
      'the second attempt asked for the rest with Range',
    );
    assert.equal(existsSync(join(dir, 'own.mp4.part.json')), false, 'the part record goes with the part');
  });

  it('a part whose record names this very task but whose bytes are no video: the whole file is checked, nothing is stored', async () => {
    const video = videoOf(0xee);
    const gw = await scripted(videoServer({ task_5: video }, new Set()));
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-parts-'));
    const s = settings(gw.url, dir);
    writeFileSync(join(dir, 'forged.mp4.part'), Buffer.from(`<html>${'y'.repeat(3990)}</html>`));
    writeFileSync(
      join(dir, 'forged.mp4.part.json'),
      JSON.stringify({ owner: partOwner({ settings: s, taskId: 'task_5', protocol: 'openai' }) }),
    );
    const failure = await new MockActivityEnvironment()
      .run(downloadVideo, { settings: s, taskId: 'task_5', protocol: 'openai' as const, outputName: 'forged' })
      .then(
        () => assert.fail('a file starting with HTML was stored'),
        (error: unknown) => error as ApplicationFailure,
      );
    assert.ok(failure instanceof ApplicationFailure, String(failure));
    assert.match(failure.message, /forged\.mp4: the stored file does not start as a video/);
    assert.equal(failure.nonRetryable, false, 'the next attempt downloads from byte 0');
    assert.equal(existsSync(join(dir, 'forged.mp4')), false);
    assert.equal(existsSync(join(dir, 'forged.mp4.part')), false, 'the part is dropped');
    // The retry Temporal would make: from byte 0, and the video is whole.
    await download(gw.url, dir, 'task_5', 'forged');
    assert.equal(sha(readFileSync(join(dir, 'forged.mp4'))), sha(video));
  });
});
