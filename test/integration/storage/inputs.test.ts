// The job-inputs store (storage/inputs/) on a real directory and a real S3 server (MinIO), and
// a worker's cache over it: bytes are kept only under their own digest, a digest mismatch is
// refused with a clear error, a cache hit fetches nothing, a missing object names its digest and
// where it was looked for.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand, ListMultipartUploadsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { InputCache } from '../../../storage/inputs/cache';
import { DirInputStore } from '../../../storage/inputs/local';
import { S3InputStore } from '../../../storage/inputs/s3';
import { readInputIndex } from '../../../storage/inputs/store';
import { InputDigestError, InputMissingError, encodeInputIndex, inputLocationFor, type InputStore } from '../../../storage/inputs/refs';
import { S3Storage } from '../../../storage/s3';
import { startS3Server, type S3TestServer } from '../../support/s3-server';
import { scratchPaths } from '../../support/storage';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const MiB = 1024 * 1024;
const BUCKET = 'inputs';

/** The same cases on both stores. */
function storeCases(label: string, open: () => InputStore, overwrite: (store: InputStore, digest: string, bytes: Buffer) => Promise<void>) {
  const scratch = scratchPaths('reelflow-inputs-cache-');

  describe(`job inputs in ${label}`, () => {
    it('stores bytes under their digest, says what is missing, reads them back', async () => {
      const store = open();
      const data = randomBytes(300 * 1024);
      const digest = sha(data);
      const absent = sha(randomBytes(8));
      assert.deepEqual([...(await store.missing([digest, absent]))].sort(), [digest, absent].sort());
      await store.put(digest, data.length, () => Readable.from([data.subarray(0, 1000), data.subarray(1000)]));
      assert.deepEqual([...(await store.missing([digest, absent]))], [absent]);
      const chunks: Buffer[] = [];
      for await (const chunk of await store.get(digest)) chunks.push(chunk as Buffer);
      assert.ok(Buffer.concat(chunks).equals(data));
    });

    it('answers "missing" by listing when asked about many digests', async () => {
      const store = open();
      const stored = Array.from({ length: 3 }, () => randomBytes(64));
      for (const bytes of stored) await store.put(sha(bytes), bytes.length, () => Readable.from([bytes]));
      const absent = Array.from({ length: 25 }, () => sha(randomBytes(8)));
      const missing = await store.missing([...stored.map(sha), ...absent]);
      assert.deepEqual([...missing].sort(), [...absent].sort());
    });

    it('refuses bytes that are not what their digest says, and keeps nothing under it', async () => {
      const store = open();
      const claimed = randomBytes(1000);
      const other = randomBytes(1000);
      await assert.rejects(
        store.put(sha(claimed), claimed.length, () => Readable.from([other])),
        (error: Error) => error instanceof InputDigestError && error.message.includes(sha(claimed)) && error.message.includes(sha(other)),
      );
      assert.ok((await store.missing([sha(claimed)])).has(sha(claimed)), 'nothing stored under the claimed digest');
      await assert.rejects(
        store.put(sha(claimed), claimed.length, () => Readable.from([claimed.subarray(0, 500)])),
        (error: Error) => error instanceof InputDigestError && /500 bytes instead of 1000/.test(error.message),
      );
      assert.ok((await store.missing([sha(claimed)])).has(sha(claimed)));
    });

    it('a missing object names its digest and the location', async () => {
      const store = open();
      const absent = sha(randomBytes(8));
      await assert.rejects(
        store.get(absent),
        (error: Error) => error instanceof InputMissingError && error.message.includes(absent) && error.message.includes(store.location),
      );
    });

    it('a worker cache verifies what it fetches, refuses a mismatch, and does not fetch a hit again', async () => {
      const store = open();
      const cache = new InputCache(scratch());
      const data = randomBytes(200 * 1024);
      const entry = { sha256: sha(data), bytes: data.length };
      await store.put(entry.sha256, entry.bytes, () => Readable.from([data]));

      const path = await cache.file(store, entry);
      assert.ok(readFileSync(path).equals(data));
      assert.equal(cache.fetches, 1);
      const [again, alongside] = await Promise.all([cache.file(store, entry), cache.file(store, entry)]);
      assert.equal(again, path);
      assert.equal(alongside, path);
      assert.equal(cache.fetches, 1, 'a hit is not fetched again');
      const named = await cache.named(store, { ...entry }, '/jobs/campaign/assets/shoe.png');
      assert.match(named, /\/shoe\.png$/, 'the copy the gateway reads keeps the file name and extension');
      assert.ok(readFileSync(named).equals(data));

      // The stored object is replaced by other bytes of the same size: a cache that never had it refuses them.
      const tampered = randomBytes(data.length);
      await overwrite(store, entry.sha256, tampered);
      const fresh = new InputCache(scratch());
      await assert.rejects(fresh.file(store, entry), (error: Error) => {
        assert.ok(error instanceof InputDigestError, String(error));
        assert.match(
          error.message,
          new RegExp(`sha256:${entry.sha256}.*${store.location.replace(/[/.]/g, '\\$&')}.*got sha256:${sha(tampered)}`),
        );
        return true;
      });
      assert.deepEqual(readdirSync(join(fresh.dir, 'sha256')), [], 'nothing is kept, not even a temporary file');
      // The first cache has its verified copy: it needs nothing from the store.
      assert.ok(readFileSync(await cache.file(store, entry)).equals(data));
      assert.equal(cache.fetches, 1);

      const absent = { sha256: sha(randomBytes(8)), bytes: 3 };
      await assert.rejects(
        fresh.file(store, absent),
        (error: Error) =>
          error instanceof InputMissingError && error.message.includes(absent.sha256) && error.message.includes(store.location),
      );
    });

    it('reads an index object back, checked against its digest', async () => {
      const store = open();
      const files = new Map([['/jobs/a/job.yaml', { sha256: sha(Buffer.from('x')), bytes: 1, text: true as const }]]);
      const bytes = encodeInputIndex('/jobs/a/job.yaml', files);
      await store.put(sha(bytes), bytes.length, () => Readable.from([bytes]));
      const index = await readInputIndex(store, sha(bytes));
      assert.equal(index.jobFile, '/jobs/a/job.yaml');
      assert.deepEqual(index.files['/jobs/a/job.yaml'], { sha256: sha(Buffer.from('x')), bytes: 1, text: true });
      await overwrite(store, sha(bytes), Buffer.from(bytes.toString('utf8').replace('job.yaml', 'jab.yaml')));
      await assert.rejects(readInputIndex(store, sha(bytes)), InputDigestError);
    });
  });
}

const dirs = scratchPaths('reelflow-inputs-dir-');
storeCases(
  'a shared directory',
  () => new DirInputStore(dirs()),
  async (store, digest, bytes) => writeFileSync(join(store.location, 'sha256', digest), bytes),
);

let server: S3TestServer;
before(async () => {
  server = await startS3Server();
  await server.createBucket(BUCKET);
});
after(async () => {
  await server?.stop();
});

function openS3(): S3InputStore {
  return new S3InputStore(
    {
      bucket: BUCKET,
      prefix: `job-${randomBytes(3).toString('hex')}/.reelflow/inputs/`,
      region: server.region,
      endpoint: server.endpoint,
      forcePathStyle: true,
    },
    { credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } },
  );
}

function keyOf(store: InputStore, digest: string): string {
  return `${store.location.slice(`s3://${BUCKET}/`.length)}sha256/${digest}`;
}

storeCases('S3 (MinIO)', openS3, async (store, digest, bytes) => {
  await (store as S3InputStore).client.send(new PutObjectCommand({ Bucket: BUCKET, Key: keyOf(store, digest), Body: bytes }));
});

describe('job inputs in S3: large files', () => {
  it('a multipart upload whose bytes do not match is aborted: no object, no parts left', async () => {
    const store = openS3();
    const claimed = sha(randomBytes(8));
    const data = randomBytes(17 * MiB);
    await assert.rejects(
      store.put(claimed, data.length, () => Readable.from([data])),
      InputDigestError,
    );
    const key = keyOf(store, claimed);
    await assert.rejects(store.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })), { name: 'NotFound' });
    const pending = await store.client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: key }));
    assert.equal((pending.Uploads ?? []).length, 0);
  });
});

describe('job inputs beside S3 outputs', () => {
  it('output storage on the same prefix neither lists them nor takes an output name under the reserved prefix', async () => {
    const prefix = `job-${randomBytes(3).toString('hex')}/`;
    const settings = { bucket: BUCKET, prefix, region: server.region, endpoint: server.endpoint, forcePathStyle: true };
    const credentials = { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey };
    const location = inputLocationFor({ storage: 's3', s3: settings }, undefined);
    assert.ok(location?.kind === 's3');
    const store = new S3InputStore(location.s3, { credentials });
    const data = Buffer.from('job file text');
    await store.put(sha(data), data.length, () => Readable.from([data]));
    const output = new S3Storage(settings, { credentials });
    await output.write('001-a.mp4', Readable.from([Buffer.from('video')]));
    assert.deepEqual(
      (await output.list()).map((o) => o.name),
      ['001-a.mp4'],
    );
    await assert.rejects(output.write(`.reelflow/inputs/sha256/${sha(data)}`, Readable.from([Buffer.from('x')])), /reserved/);
  });
});

// Not a store case: the directory store's files are plain files a user can look at and remove.
describe('job inputs in a shared directory: layout', () => {
  it('keeps one file per digest under sha256/', async () => {
    const dir = dirs();
    const store = new DirInputStore(dir);
    const data = Buffer.from('hello inputs\n');
    await store.put(sha(data), data.length, () => Readable.from([data]));
    assert.deepEqual(readdirSync(join(dir, 'sha256')), [sha(data)]);
    rmSync(join(dir, 'sha256', sha(data)));
    assert.ok(!existsSync(join(dir, 'sha256', sha(data))));
    await assert.rejects(store.get(sha(data)), InputMissingError);
  });
});
