// A writer process killed with SIGKILL in the middle of a large write, on local disk and on each real
// S3-compatible server (MinIO, versitygw: test/support/s3-server.ts): nothing half-written ever shows under the final name (nothing at all, or the
// previous complete version), a retry done as the download activity does it writes the whole
// video with the right sha256, and what the killed writer left behind (a local `.part`, an
// incomplete multipart upload) breaks neither listing nor reading, nor outlives the retry.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, ListMultipartUploadsCommand, ListPartsCommand } from '@aws-sdk/client-s3';
import type { OutputSettings } from '../../../jobfile/plan';
import { LocalStorage, hashFile, type Storage } from '../../../storage/index';
import { S3Storage } from '../../../storage/s3';
import { tempDir } from '../../support/jobs';
import { s3ServerKinds, startS3Server, type S3ServerKind, type S3TestServer } from '../../support/s3-server';
import { manifestRow, sha256Of, videoBytes } from '../../support/storage';
import { spawnStorageWriter, type WriterJob } from '../../support/storage-writer';

const MiB = 1024 * 1024;
/** Big enough for several S3 parts; paced so the writer is still busy when it is killed. */
const VIDEO_BYTES = 40 * MiB;
const BYTES_PER_SECOND = 16 * MiB;
const PART_SIZE = 5 * MiB;
const NAME = 'renders/001-hero.mp4';
const BUCKET = 'renders';

/** One storage backend as the tests see it, plus the view a test needs of its leftovers. */
interface Backend {
  output: OutputSettings;
  /** Credentials and the like for the writer process. */
  env: NodeJS.ProcessEnv;
  open(): Storage;
  /** The bytes written so far by a writer in flight: reaching `atLeast` means it is mid-write. */
  inFlightBytes(): Promise<number>;
  /** sha256 of what a reader gets under the final name, or undefined when there is nothing. */
  readFinal(): Promise<string | undefined>;
  /** What the killed writer left behind that is still around (names, for messages). */
  leftovers(): Promise<string[]>;
}

let root: string;
const servers = new Map<S3ServerKind, S3TestServer>();
let cases = 0;

before(async () => {
  root = tempDir('reelflow-kill-mid-write-');
  for (const kind of s3ServerKinds()) {
    const server = await startS3Server({ kind });
    servers.set(kind, server);
    await server.createBucket(BUCKET);
  }
});
after(async () => {
  await Promise.all([...servers.values()].map((server) => server.stop()));
  await rm(root, { recursive: true, force: true });
});

function localBackend(): Backend {
  const dir = join(root, `case-${cases++}`);
  const storage = new LocalStorage(dir);
  const partPath = `${storage.localPath(NAME)}.part`;
  return {
    output: { storage: 'local', dir },
    env: {},
    open: () => new LocalStorage(dir),
    inFlightBytes: async () => (await stat(partPath).catch(() => undefined))?.size ?? 0,
    readFinal: async () => ((await stat(storage.localPath(NAME)).catch(() => undefined)) ? hashFile(storage.localPath(NAME)) : undefined),
    // A `.part` is kept on purpose (a retry resumes from it) until the write completes.
    leftovers: async () => ((await stat(partPath).catch(() => undefined)) ? [partPath] : []),
  };
}

function s3Backend(kind: S3ServerKind): Backend {
  const server = servers.get(kind) as S3TestServer;
  const s3 = { bucket: BUCKET, prefix: `case-${cases++}/`, region: server.region, endpoint: server.endpoint, forcePathStyle: true };
  const credentials = { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey };
  const storage = new S3Storage(s3, { credentials, partSize: PART_SIZE });
  const Key = s3.prefix + NAME;
  const pendingUploads = async () =>
    ((await storage.client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: Key }))).Uploads ?? []).filter(
      (u) => u.Key === Key,
    );
  return {
    output: { storage: 's3', s3 },
    env: { AWS_ACCESS_KEY_ID: credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey },
    open: () => new S3Storage(s3, { credentials, partSize: PART_SIZE }),
    inFlightBytes: async () => {
      let bytes = 0;
      for (const upload of await pendingUploads()) {
        const parts = await storage.client.send(new ListPartsCommand({ Bucket: BUCKET, Key, UploadId: upload.UploadId }));
        for (const part of parts.Parts ?? []) bytes += part.Size ?? 0;
      }
      return bytes;
    },
    readFinal: async () => {
      try {
        const got = await storage.client.send(new GetObjectCommand({ Bucket: BUCKET, Key }));
        return await sha256Of(got.Body as AsyncIterable<Uint8Array>);
      } catch (err) {
        if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
        throw err;
      }
    },
    leftovers: async () => (await pendingUploads()).map((u) => `multipart upload ${u.UploadId} of ${Key}`),
  };
}

/** Starts a writer of `seed`'s video, waits until at least `atLeast` bytes are stored, kills it. */
async function killMidWrite(backend: Backend, seed: string, atLeast: number): Promise<void> {
  const job: WriterJob = {
    output: backend.output,
    name: NAME,
    seed,
    bytes: VIDEO_BYTES,
    bytesPerSecond: BYTES_PER_SECOND,
    partSize: PART_SIZE,
  };
  const writer = spawnStorageWriter(job, backend.env);
  let output = '';
  writer.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  writer.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(writer, 'exit');
  const deadline = Date.now() + 60_000;
  while ((await backend.inFlightBytes()) < atLeast) {
    if (writer.exitCode !== null) assert.fail(`the writer ended (code ${writer.exitCode}) before it was killed: ${output.trim()}`);
    if (Date.now() > deadline) assert.fail(`the writer stored fewer than ${atLeast} bytes in 60 s: ${output.trim()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  writer.kill('SIGKILL');
  const [, signal] = (await exited) as [number | null, NodeJS.Signals | null];
  assert.equal(signal, 'SIGKILL', `the writer was killed, not finished: ${output.trim()}`);
  assert.ok(!output.includes('written'), 'the writer did not get to the end');
}

/** Writes the video again the way the download activity does: resuming a kept partial write. */
async function retry(storage: Storage, seed: string) {
  const kept = await storage.partialBytes(NAME);
  return storage.write(NAME, videoBytes(seed, kept, VIDEO_BYTES), { resumeFrom: kept, expectedBytes: VIDEO_BYTES });
}

const backends: [string, () => Backend][] = [
  ['local disk', localBackend],
  ...s3ServerKinds().map((kind): [string, () => Backend] => [`S3 (${kind})`, () => s3Backend(kind)]),
];
for (const [label, makeBackend] of backends) {
  describe(`a writer killed mid-write (SIGKILL), ${label}`, () => {
    it('leaves nothing under the final name; a retry writes the whole video', async () => {
      const backend = makeBackend();
      const expected = await sha256Of(videoBytes('first', 0, VIDEO_BYTES));
      await killMidWrite(backend, 'first', 3 * PART_SIZE);

      const storage = backend.open();
      assert.equal(await storage.stat(NAME), undefined, 'no object under the final name');
      assert.equal(await backend.readFinal(), undefined, 'nothing to read under the final name');
      assert.deepEqual(await storage.list(), [], 'the leftovers are not listed');
      assert.ok((await backend.inFlightBytes()) < VIDEO_BYTES, 'the write really was cut short');

      const result = await retry(storage, 'first');
      assert.deepEqual([result.bytes, result.sha256], [VIDEO_BYTES, expected]);
      await assertWhole(backend, storage, expected);
    });

    it('keeps the previous complete version when an overwrite is killed; a retry replaces it', async () => {
      const backend = makeBackend();
      const previous = await backend.open().write(NAME, videoBytes('previous', 0, 12 * MiB), { expectedBytes: 12 * MiB });
      // Recorded, as a run records what it stores: reelflow replaces only a file it wrote (docs/files.md).
      await backend.open().appendManifest(manifestRow(1, { file: NAME, bytes: previous.bytes, sha256: previous.sha256 }));
      const expected = await sha256Of(videoBytes('next', 0, VIDEO_BYTES));
      await killMidWrite(backend, 'next', 3 * PART_SIZE);

      const storage = backend.open();
      assert.deepEqual(await storage.stat(NAME), { name: NAME, bytes: 12 * MiB, sha256: previous.sha256 }, 'the previous version, whole');
      assert.equal(await backend.readFinal(), previous.sha256, 'readers still get the previous version');
      assert.deepEqual(
        (await storage.list()).map((o) => [o.name, o.bytes]),
        [[NAME, 12 * MiB]],
        'listed once, as it was',
      );

      const result = await retry(storage, 'next');
      assert.deepEqual([result.bytes, result.sha256], [VIDEO_BYTES, expected]);
      await assertWhole(backend, storage, expected);
    });
  });
}

/** After the retry: the new video whole under its name, listed once, nothing left over, a working manifest. */
async function assertWhole(backend: Backend, storage: Storage, sha256: string): Promise<void> {
  assert.equal(await backend.readFinal(), sha256, 'a reader gets exactly the retried video');
  assert.deepEqual(
    await backend.open().stat(NAME),
    { name: NAME, bytes: VIDEO_BYTES, sha256 },
    'a fresh instance sees it, with its sha256',
  );
  assert.deepEqual(
    (await storage.list()).map((o) => [o.name, o.bytes]),
    [[NAME, VIDEO_BYTES]],
  );
  assert.deepEqual(await backend.leftovers(), [], 'nothing of the killed writer is left');
  await storage.appendManifest(manifestRow(1, { file: NAME, bytes: VIDEO_BYTES, sha256 }));
  assert.deepEqual((await storage.readManifest()).rows.map((r) => [r.file, r.sha256]).at(-1), [NAME, sha256]);
}
