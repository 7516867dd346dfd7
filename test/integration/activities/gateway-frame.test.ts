// The last frame a gateway hands back with a shot (docs/chains.md, "The frame a shot starts from"):
// the download activity stores it when the shot succeeds, and a dependent's create sends those
// bytes. A frame that cannot be had (not an image, gone from the store) never fails the render:
// the dependent's frame is made from the stored video. Real HTTP, a real local output directory, a
// real video made by ffmpeg; Temporal's MockActivityEnvironment gives the activities their context.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { closeActivityResources, storageFor } from '../../../activities/context';
import { downloadVideo, type DownloadedVideo } from '../../../activities/download';
import { acceptKeylessJobsInThisWorker } from '../../../activities/job-key-check';
import { withNeededOutputs } from '../../../activities/needs';
import type { JobSettings, RenderRequest } from '../../../jobfile/plan';
import { lastFrame } from '../../../media/frames';
import type { ManifestRow } from '../../../storage/manifest/row';
import { scripted } from '../../support/scripted-gateway';

acceptKeylessJobsInThisWorker(true);
const KEY = 'sk-test-gateway-frame-0000';
process.env.GATEWAY_API_KEY = KEY;
after(() => closeActivityResources());

const scratch = mkdtempSync(join(tmpdir(), 'reelflow-gwframe-'));
const VIDEO_PATH = join(scratch, 'v.mp4');
execFileSync('ffmpeg', [
  '-hide_banner',
  '-loglevel',
  'error',
  '-f',
  'lavfi',
  '-i',
  'testsrc=size=160x90:rate=10',
  '-t',
  '1',
  '-pix_fmt',
  'yuv420p',
  VIDEO_PATH,
]);
const VIDEO = readFileSync(VIDEO_PATH);
/** A PNG that is not the video's last frame: what the provider says it is, taken as it is. */
const PNG = execFileSync('ffmpeg', [
  '-hide_banner',
  '-loglevel',
  'error',
  '-f',
  'lavfi',
  '-i',
  'color=c=blue:size=160x90',
  '-frames:v',
  '1',
  '-f',
  'image2',
  '-c:v',
  'png',
  '-',
]);

function settings(baseUrl: string, dir: string): JobSettings {
  return {
    job: 'gateway-frame',
    gateway: { baseUrls: [baseUrl], apiKeyEnv: 'GATEWAY_API_KEY', requestTimeoutMs: 5_000 },
    concurrency: { maxInFlight: 1 },
    polling: { initialMs: 1_000, maxMs: 1_000, timeoutMs: 60_000 },
    retries: { create: 'safe', download: 1 },
    output: { storage: 'local', dir },
  };
}

async function setUp() {
  const gateway = await scripted((_q, res) =>
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': VIDEO.length }).end(VIDEO),
  );
  const provider = await scripted((req, res) =>
    req.url?.startsWith('/last.png') ? res.writeHead(200, { 'content-type': 'image/png' }).end(PNG) : res.writeHead(200).end('<html/>'),
  );
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-gwframe-out-'));
  return { gateway, provider, dir, settings: settings(gateway.url, dir) };
}

/** Downloads shot `key` (its status named `lastFrameUrl`), records it, and returns the first frame a shot continuing it sends. */
async function continueFrom(s: JobSettings, key: string, lastFrameUrl: string | undefined, row: Partial<ManifestRow> = {}) {
  const env = new MockActivityEnvironment();
  const video: DownloadedVideo = await env.run(downloadVideo, {
    settings: s,
    taskId: `task-${key}`,
    protocol: 'openai' as const,
    outputName: key,
    ...(lastFrameUrl ? { lastFrameUrl } : {}),
  });
  await storageFor(s.output).appendManifest({
    ...{ key, id: key, index: 1, state: 'succeeded', model: 'm', protocol: 'general', prompt: key, task_id: `task-${key}`, base_url: null },
    ...{ created_at: null, finished_at: new Date().toISOString(), polls: 1, error: null },
    ...{ file: video.file, bytes: video.bytes, sha256: video.sha256 },
    ...(video.lastFrame ? { last_frame: video.lastFrame } : {}),
    ...row,
  });
  const request = {
    model: 'm',
    protocol: 'general',
    prompt: 'next',
    references: [],
    needs: [{ key, use: 'last_frame' }],
  } as unknown as RenderRequest;
  const sent: RenderRequest = await env.run(withNeededOutputs, s, request);
  const first = sent.references.find((r) => r.role === 'first_frame');
  assert.ok(first?.local, JSON.stringify(sent.references));
  return { video, sent: readFileSync(first.source) };
}

describe("the gateway's last frame", () => {
  it('is stored when the shot succeeds, and the next shot sends it byte for byte; the key is not sent for it', async () => {
    const { provider, dir, settings: s } = await setUp();
    const { video, sent } = await continueFrom(s, 'shot-1', `${provider.url}/last.png?signature=s`);
    assert.equal(video.lastFrame?.type, 'png');
    assert.equal(video.lastFrame?.bytes, PNG.length);
    assert.ok(sent.equals(PNG), 'the first frame is the PNG the gateway returned');
    assert.equal(provider.seen[0]?.headers.authorization, undefined);
    const extracted = join(dir, 'extracted.png');
    await lastFrame(join(dir, video.file), extracted);
    assert.ok(!readFileSync(extracted).equals(PNG), 'not the frame made from the video');
  });

  it('one that is not an image is not taken: the render succeeds and the next shot starts from the stored video', async () => {
    const { provider, dir, settings: s } = await setUp();
    const { video, sent } = await continueFrom(s, 'shot-1', `${provider.url}/not-an-image`);
    assert.equal(video.lastFrame, undefined);
    const extracted = join(dir, 'extracted.png');
    await lastFrame(join(dir, video.file), extracted);
    assert.ok(sent.equals(readFileSync(extracted)), 'the last decoded frame of the stored video');
  });

  it('one recorded but gone from the frame store: the next shot starts from the stored video', async () => {
    const { dir, settings: s } = await setUp();
    const gone = { sha256: 'f'.repeat(64), bytes: 10, type: 'png' as const };
    const { video, sent } = await continueFrom(s, 'shot-1', undefined, { last_frame: gone });
    const extracted = join(dir, 'extracted.png');
    await lastFrame(join(dir, video.file), extracted);
    assert.ok(sent.equals(readFileSync(extracted)));
  });
});
