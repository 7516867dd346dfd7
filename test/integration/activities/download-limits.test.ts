// output.max_bytes (docs/security.md, "In detail": a gateway): the download activity, run with a real gateway client over real
// HTTP into a real local directory (Temporal's MockActivityEnvironment gives it an activity context).
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { closeActivityResources } from '../../../activities/context';
import { downloadVideo, type DownloadedVideo } from '../../../activities/download';
import type { JobSettings } from '../../../jobfile/plan';
import { scripted } from '../../support/scripted-gateway';
import { acceptKeylessJobsInThisWorker } from '../../../activities/job-key-check';

// The jobs here are built by the test, with no starter's key fingerprint: this process carries them as a
// worker started with --accept-keyless-jobs does (docs/keys.md).
acceptKeylessJobsInThisWorker(true);

const KEY = 'sk-test-download-limits-0000';
const MP4_HEAD = Buffer.from('000000146674797069736f6d00000200', 'hex');
process.env.GATEWAY_API_KEY = KEY; // the variable a worker sends to a loopback gateway unasked (docs/keys.md)
after(() => closeActivityResources());

function settings(baseUrl: string, dir: string, maxBytes: number): JobSettings {
  return {
    job: 'limits',
    gateway: { baseUrls: [baseUrl], apiKeyEnv: 'GATEWAY_API_KEY', requestTimeoutMs: 5_000 },
    concurrency: { maxInFlight: 1 },
    polling: { initialMs: 1_000, maxMs: 1_000, timeoutMs: 60_000 },
    retries: { create: 'safe', download: 1 },
    output: { storage: 'local', dir, maxBytes },
  };
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApplicationFailure, String(error));
    return error;
  }
  assert.fail('the download succeeded');
}

describe('output.max_bytes', () => {
  it('a declared length above it is refused before the first byte is stored', async () => {
    let sent = 0;
    const gw = await scripted((_q, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(10 ** 15) });
      const timer = setInterval(() => {
        sent += 64 * 1024;
        res.write(Buffer.concat([MP4_HEAD, Buffer.alloc(64 * 1024 - MP4_HEAD.length)]));
      }, 5);
      res.on('close', () => clearInterval(timer));
    });
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-limits-'));
    const failure = await failureOf(
      new MockActivityEnvironment().run(downloadVideo, {
        settings: settings(gw.url, dir, 1 << 20),
        taskId: 'video_1',
        protocol: 'openai' as const,
        outputName: 'declared',
      }),
    );
    assert.equal(failure.type, 'video_too_large');
    assert.equal(failure.nonRetryable, true);
    assert.match(
      failure.message,
      /declared as 1000000000000000 bytes, more than output\.max_bytes \(1048576\): refused before the first byte/,
    );
    assert.deepEqual(readdirSync(dir), [], 'no part file');
    assert.ok(sent < 4 << 20, `the gateway sent ${sent} bytes before being cut off`);
  });

  it('an endless chunked body is cut at the limit, the part removed, the failure final', async () => {
    const gw = await scripted((_q, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.write(MP4_HEAD);
      const timer = setInterval(() => res.write(Buffer.alloc(256 * 1024, 1)), 2);
      res.on('close', () => clearInterval(timer));
    });
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-limits-'));
    const failure = await failureOf(
      new MockActivityEnvironment().run(downloadVideo, {
        settings: settings(gw.url, dir, 2 << 20),
        taskId: 'video_1',
        protocol: 'openai' as const,
        outputName: 'endless',
      }),
    );
    assert.equal(failure.type, 'video_too_large');
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /went past 2097152 bytes \(output\.max_bytes\) and was cut; nothing was kept/);
    assert.equal(existsSync(join(dir, 'endless.mp4.part')), false);
    assert.equal(existsSync(join(dir, 'endless.mp4')), false);
  });

  it('a video within it is stored', async () => {
    const video = Buffer.concat([MP4_HEAD, Buffer.alloc(100_000, 2)]);
    const gw = await scripted((_q, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(video.length) });
      res.end(video);
    });
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-limits-'));
    const done: DownloadedVideo = await new MockActivityEnvironment().run(downloadVideo, {
      settings: settings(gw.url, dir, 1 << 20),
      taskId: 'video_1',
      protocol: 'openai' as const,
      outputName: 'fits',
    });
    assert.equal(done.bytes, video.length);
    assert.ok(existsSync(join(dir, 'fits.mp4')));
  });
});
