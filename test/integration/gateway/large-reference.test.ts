// Large local references are streamed (docs/files.md, "What is sent is what was checked"): a create with a 300 MiB reference goes
// through a real loopback gateway with the exact bytes, a Content-Length known up front and the
// worker's memory flat; retries and failovers send the whole body again; a file over the limit is
// refused before anything is sent, and one that changes while it is sent ends the create clearly.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, readlink, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AmbiguousCreateError, createGatewayClient, InvalidRequestError } from '../../../gateway/index';
import type { GatewayClient, GatewayClientOptions } from '../../../gateway/contract';
import type { RenderRequest } from '../../../jobfile/plan';
import { MAX_REFERENCE_BYTES } from '../../../jobfile/reference-limits';
import { created, failed, startReceiver, startReceiverInChild, type ChildReceiver, type Receiver, type Received } from './body-receiver';

const KEY = 'sk-large-reference-0123456789';
const MIB = 2 ** 20;
/** Not a multiple of 3, so the base64 ends padded; not of the read size either. */
const LARGE = 300 * MIB + 1;
const PROMPT = 'a "quoted" prompt, ünïcödé, a back\\slash and a\nnew line';

let dir = '';
const receivers: (Receiver | ChildReceiver)[] = [];
const clients: GatewayClient[] = [];
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-large-ref-'));
});
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(receivers.map((r) => r.close()));
  await rm(dir, { recursive: true, force: true });
});

/** The gateway of a memory test: in a process of its own, so the test's RSS is the sender's. */
async function receiverInChild(prefix: string): Promise<ChildReceiver> {
  const r = await startReceiverInChild(prefix);
  receivers.push(r);
  return r;
}

async function receiver(answer: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

function client(baseUrls: string[], over: Partial<GatewayClientOptions> = {}): GatewayClient {
  const c = createGatewayClient({ baseUrls, apiKey: KEY, cooldownMs: 100, maxRetryAfterMs: 2_000, allowPrivateTargets: true, ...over });
  clients.push(c);
  return c;
}

/** Writes `size` bytes of varied content (a random block that does not divide the size), returning their sha256. */
async function writeReference(name: string, size: number): Promise<{ path: string; sha256: string; size: number }> {
  const path = join(dir, name);
  const block = randomBytes(MIB + 7);
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  for (let left = size; left > 0; left -= block.length) {
    const part = left >= block.length ? block : block.subarray(0, left);
    hash.update(part);
    if (!out.write(part)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return { path, sha256: hash.digest('hex'), size };
}

function general(path: string, over: Partial<RenderRequest> = {}): RenderRequest {
  return {
    model: 'seedance-1-0-pro-250528',
    protocol: 'general',
    prompt: PROMPT,
    seconds: '5',
    ratio: '16:9',
    references: [
      { kind: 'image', role: 'reference_image', source: path, local: true },
      { kind: 'video', role: 'reference_video', source: 'https://assets.example.com/b.mp4', local: false },
    ],
    ...over,
  };
}

function openai(path: string): RenderRequest {
  return {
    model: 'veo-3.1-fast-generate-001',
    protocol: 'openai',
    prompt: PROMPT,
    seconds: '4',
    references: [{ kind: 'image', role: 'reference_image', source: path, local: true }],
  };
}

/** The general body the gateway got, whole, with its base64 replaced by `X`, next to what it must be. */
function assertGeneralBody(got: Received, file: { sha256: string; size: number }): void {
  assert.ok(got.complete, 'the body arrived as long as its Content-Length said');
  assert.equal(got.headers['content-length'], String(got.bytes), 'a Content-Length known before the first byte');
  assert.equal(got.headers['transfer-encoding'], undefined, 'not chunked');
  assert.equal(got.base64Chars, 4 * Math.ceil(file.size / 3), 'base64 of the exact length, only its alphabet');
  assert.deepEqual(got.reference, { bytes: file.size, sha256: file.sha256 }, 'the decoded reference is the file');
  assert.deepEqual(JSON.parse(`${got.head}X${got.tail}`), {
    model: 'seedance-1-0-pro-250528',
    prompt: PROMPT,
    seconds: '5',
    metadata: {
      ratio: '16:9',
      content: [
        { type: 'image_url', image_url: { url: 'data:image/png;base64,X' }, role: 'reference_image' },
        { type: 'video_url', video_url: { url: 'https://assets.example.com/b.mp4' }, role: 'reference_video' },
      ],
    },
  });
}

function assertMultipartBody(got: Received, file: { sha256: string; size: number }): void {
  assert.ok(got.complete);
  assert.equal(got.headers['content-length'], String(got.bytes));
  assert.match(got.head, /name="prompt"\r\n\r\na "quoted" prompt/);
  assert.match(got.head, /name="input_reference"; filename="[^"]+"\r\nContent-Type: image\/png\r\n\r\n$/);
  assert.deepEqual(got.reference, { bytes: file.size, sha256: file.sha256 });
}

/** The process's peak RSS while `work` runs, sampled every 10 ms. */
async function peakRss<T>(work: () => Promise<T>): Promise<{ value: T; peak: number }> {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  try {
    const value = await work();
    return { value, peak: Math.max(peak, process.memoryUsage.rss()) };
  } finally {
    clearInterval(timer);
  }
}

/** Files of this test the process holds open (sockets to the test's gateways come and go). */
async function openFiles(): Promise<string[]> {
  const fds = await readdir('/proc/self/fd');
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return targets.filter((target) => target.startsWith(dir));
}

describe('a large local reference is streamed', () => {
  it('general protocol, 300 MiB: the gateway gets exactly the JSON, and memory grows by less than 64 MiB', async () => {
    const gw = await receiverInChild('task');
    const c = client([gw.url]);
    // A warm-up create with a small reference, so the baseline holds the client's own allocations.
    const small = await writeReference('small.png', MIB);
    await c.createTask(general(small.path));
    await gw.receivedCount(1);
    assertGeneralBody(gw.received[0]!, small);
    const big = await writeReference('large.png', LARGE);
    try {
      const baseline = process.memoryUsage.rss();
      const { value, peak } = await peakRss(() => c.createTask(general(big.path)));
      assert.equal(value.taskId, 'task-1');
      await gw.receivedCount(2);
      assertGeneralBody(gw.received[1]!, big);
      const growth = peak - baseline;
      assert.ok(growth < 64 * MIB, `RSS grew by ${(growth / MIB).toFixed(0)} MiB building and sending the body`);
    } finally {
      await rm(big.path, { force: true });
    }
  });

  it('openai protocol, 300 MiB: the file part is the file, memory grows by less than 64 MiB', async () => {
    const gw = await receiverInChild('video');
    const c = client([gw.url]);
    const small = await writeReference('small-openai.png', MIB);
    await c.createTask(openai(small.path));
    const big = await writeReference('large-openai.png', LARGE);
    try {
      const baseline = process.memoryUsage.rss();
      const { value, peak } = await peakRss(() => c.createTask(openai(big.path)));
      assert.equal(value.taskId, 'video-1');
      await gw.receivedCount(2);
      assertMultipartBody(gw.received[1]!, big);
      const growth = peak - baseline;
      assert.ok(growth < 64 * MIB, `RSS grew by ${(growth / MIB).toFixed(0)} MiB`);
    } finally {
      await rm(big.path, { force: true });
    }
  });
});

describe('every attempt sends the whole body again', () => {
  let file: { path: string; sha256: string; size: number };
  before(async () => {
    file = await writeReference('retried.png', 20 * MIB + 2);
  });

  for (const protocol of ['general', 'openai'] as const) {
    it(`${protocol}: a 502 on the first base, then the create again on the second (retries.create: always)`, async () => {
      const first = await receiver((res) => failed(res, 502));
      const second = await receiver((res, n) => created(res, `task-${n}`));
      const c = client([first.url, second.url], { createRetries: 'always' });
      const result = await c.createTask(protocol === 'general' ? general(file.path) : openai(file.path));
      assert.equal(result.baseUrl, second.url);
      assert.equal(result.attempts, 2);
      for (const got of [first.received[0]!, second.received[0]!]) {
        if (protocol === 'general') assertGeneralBody(got, file);
        else assertMultipartBody(got, file);
      }
      assert.deepEqual(await openFiles(), [], 'every attempt closed its file');
    });
  }

  it('a body that cannot be made again after a create that may have been processed ends the item unknown, not failed', async () => {
    const path = join(dir, 'vanishing.png');
    await writeFile(path, randomBytes(1000));
    // The first base gets the whole create, then the file is gone before it answers 502.
    const first = await receiver((res) => void rm(path).then(() => failed(res, 502)));
    const second = await receiver((res, n) => created(res, `task-${n}`));
    const c = client([first.url, second.url], { createRetries: 'always' });
    await assert.rejects(c.createTask(general(path)), (e: unknown) => {
      assert.ok(e instanceof AmbiguousCreateError, String(e));
      assert.match(e.message, /may have been processed/);
      return true;
    });
    assert.equal(first.received.length, 1);
    assert.equal(second.received.length, 0);
  });

  it('general: a 503 with Retry-After (not processed, so safe) fails over with the whole body', async () => {
    const first = await receiver((res) => failed(res, 503, { 'retry-after': '1' }));
    const second = await receiver((res, n) => created(res, `task-${n}`));
    const c = client([first.url, second.url]);
    const result = await c.createTask(general(file.path));
    assert.equal(result.baseUrl, second.url);
    assertGeneralBody(first.received[0]!, file);
    assertGeneralBody(second.received[0]!, file);
  });
});

describe('references the gateway cannot take', () => {
  it('a file over the limit is refused before anything is sent, naming the file, its size and the limit', async () => {
    const gw = await receiver((res, n) => created(res, `task-${n}`));
    const c = client([gw.url]);
    const path = join(dir, 'over.png');
    // Sparse: the size is what counts, and nothing of it is written to disk.
    await writeFile(path, '');
    await truncate(path, MAX_REFERENCE_BYTES + 1);
    try {
      for (const request of [general(path), openai(path)]) {
        await assert.rejects(c.createTask(request), (e: unknown) => {
          assert.ok(e instanceof InvalidRequestError, String(e));
          assert.ok(e.message.includes(path), e.message);
          assert.match(
            e.message,
            /is 384\.0 MiB \(402,653,119 bytes\), over the 384\.0 MiB \(402,653,118 bytes\) a local reference may have/,
          );
          return true;
        });
      }
      assert.equal(gw.received.length, 0, 'nothing was sent');
    } finally {
      await rm(path, { force: true });
    }
  });

  it('a file that shrinks while it is sent ends the create with an error naming it, not as ambiguous', async () => {
    const file = await writeReference('shrinking.png', 40 * MIB);
    for (const protocol of ['general', 'openai'] as const) {
      await truncate(file.path, 40 * MIB);
      const gw = await receiver((res, n) => created(res, `task-${n}`));
      gw.onFirstBytes = () => void truncate(file.path, MIB);
      const c = client([gw.url]);
      await assert.rejects(c.createTask(protocol === 'general' ? general(file.path) : openai(file.path)), (e: unknown) => {
        assert.ok(e instanceof InvalidRequestError, `${protocol}: ${String(e)}`);
        assert.match(e.message, /reference file .*shrinking\.png changed while it was being sent \(41943040 bytes when the request began/);
        return true;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(gw.received.length, 1);
      assert.equal(gw.received[0]!.complete, false, 'the gateway got a cut-off request, which it cannot act on');
    }
  });
});
