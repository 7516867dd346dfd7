// S3Storage against a real S3-compatible server (MinIO from scripts/s3-server.sh). No mocks.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { crc32 } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import {
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { SizeMismatchError, StorageError, openStorage } from '../../../storage/index';
import { S3Storage, type S3StorageOptions } from '../../../storage/s3';
import type { S3OutputSettings } from '../../../jobfile/plan';
import { freePort, startS3Server, type S3TestServer } from '../../support/s3-server';

import { chunked, manifestRow } from '../../support/storage';

const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');
const MiB = 1024 * 1024;

let server: S3TestServer;
const BUCKET = 'renders';

function settings(extra: Partial<S3OutputSettings> = {}): S3OutputSettings {
  return {
    bucket: BUCKET,
    prefix: `job-${randomBytes(3).toString('hex')}/2026-01-01/`,
    region: server.region,
    endpoint: server.endpoint,
    forcePathStyle: true,
    ...extra,
  };
}

function open(extra: Partial<S3OutputSettings> = {}, options: S3StorageOptions = {}): S3Storage {
  return new S3Storage(settings(extra), {
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    partSize: 5 * MiB,
    ...options,
  });
}

async function headOrUndefined(storage: S3Storage, key: string) {
  try {
    return await storage.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
  } catch (err) {
    if ((err as { name?: string }).name === 'NotFound') return undefined;
    throw err;
  }
}

async function pendingUploads(storage: S3Storage, key: string) {
  const found = await storage.client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: key }));
  return (found.Uploads ?? []).filter((u) => u.Key === key);
}

before(async () => {
  server = await startS3Server();
  await server.createBucket(BUCKET);
});
after(async () => {
  await server?.stop();
});

describe('S3Storage on a real S3 server', () => {
  it('writes multipart, stats with sha256 metadata, lists and keeps a manifest', async () => {
    const storage = open();
    const signedAs: string[] = [];
    storage.client.middlewareStack.add(
      (next, context) => async (args) => {
        const headers = (args.request as { headers?: Record<string, string> }).headers ?? {};
        if (context.commandName === 'UploadPartCommand')
          signedAs.push(`${headers['x-amz-content-sha256']} ${headers['x-amz-checksum-crc32'] ? 'crc32' : 'no-crc'}`);
        return next(args);
      },
      { step: 'finalizeRequest', name: 'testRecordPayloadSigning' },
    );
    await storage.checkWritable();
    const data = randomBytes(12 * MiB + 123);
    const progress: number[] = [];
    const result = await storage.write('001-hero.mp4', chunked(data, 256 * 1024), {
      expectedBytes: data.length,
      onProgress: (b) => progress.push(b),
    });
    assert.equal(result.bytes, data.length);
    assert.equal(result.sha256, sha(data));
    assert.equal(result.location, `${storage.location}001-hero.mp4`);
    assert.equal(progress.at(-1), data.length);

    assert.deepEqual(
      signedAs,
      ['UNSIGNED-PAYLOAD crc32', 'UNSIGNED-PAYLOAD crc32', 'UNSIGNED-PAYLOAD crc32'],
      'parts carry a CRC32 the server verifies',
    );
    const key = `${storage.location.slice(`s3://${BUCKET}/`.length)}001-hero.mp4`;
    const head = await headOrUndefined(storage, key);
    assert.equal(head?.ContentType, 'video/mp4');
    const sidecar = await storage.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${key}.sha256` }));
    assert.equal(sidecar.Metadata?.sha256, sha(data), 'x-amz-meta-sha256 on the sidecar');
    assert.equal(sidecar.Metadata?.bytes, String(data.length));
    assert.equal(sidecar.Metadata?.etag, head?.ETag);
    assert.equal(await sidecar.Body?.transformToString(), `${sha(data)}  001-hero.mp4\n`, 'sha256sum format');

    const small = Buffer.from('tiny video');
    await storage.write('nested/002.mp4', chunked(small, 256 * 1024));
    assert.deepEqual(await storage.stat('001-hero.mp4'), { name: '001-hero.mp4', bytes: data.length, sha256: sha(data) });
    assert.deepEqual(await storage.stat('nested/002.mp4'), { name: 'nested/002.mp4', bytes: small.length, sha256: sha(small) });
    assert.equal(await storage.stat('missing.mp4'), undefined);

    await storage.appendManifest(manifestRow(1, { file: '001-hero.mp4', bytes: data.length, sha256: sha(data) }));
    await storage.appendManifest(manifestRow(2, { file: 'nested/002.mp4', bytes: small.length, sha256: sha(small) }));
    await storage.appendManifest(manifestRow(3, { state: 'failed', error: { kind: 'render_failed', message: 'no' } }));
    assert.deepEqual(
      (await storage.readManifest()).map((r) => r.key),
      ['k1', 'k2', 'k3'],
    );
    assert.deepEqual(await storage.list(), [
      { name: '001-hero.mp4', bytes: data.length },
      { name: 'nested/002.mp4', bytes: small.length },
    ]);
    assert.equal(await storage.partialBytes('001-hero.mp4'), 0);
  });

  it('reads manifest rows appended by other instances (other workers), in order', async () => {
    const s = settings();
    const creds = { credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } };
    const a = new S3Storage(s, creds);
    const b = new S3Storage(s, creds);
    await a.appendManifest(manifestRow(1));
    await b.appendManifest(manifestRow(2));
    await Promise.all([3, 4, 5, 6].map((i) => (i % 2 ? a : b).appendManifest(manifestRow(i))));
    const fromA = await a.readManifest();
    assert.deepEqual(
      fromA.slice(0, 2).map((r) => r.key),
      ['k1', 'k2'],
    );
    assert.deepEqual(new Set(fromA.map((r) => r.key)), new Set(['k1', 'k2', 'k3', 'k4', 'k5', 'k6']));
    assert.deepEqual(await new S3Storage(s, creds).readManifest(), fromA);
  });

  it('leaves no object when the body fails mid-way through a multipart upload', async () => {
    const storage = open();
    const key = `${storage.location.slice(`s3://${BUCKET}/`.length)}cut.mp4`;
    const cut = new Error('other side closed');
    await assert.rejects(storage.write('cut.mp4', chunked(randomBytes(17 * MiB), 256 * 1024, cut)), (err) => err === cut);
    assert.equal(await headOrUndefined(storage, key), undefined);
    assert.deepEqual(await pendingUploads(storage, key), [], 'the multipart upload was aborted');
    assert.equal(await storage.stat('cut.mp4'), undefined);
  });

  it('leaves no object when the body fails before the first part, or closes early', async () => {
    const storage = open();
    const cut = new Error('reset');
    await assert.rejects(storage.write('early.mp4', chunked(randomBytes(MiB), 64 * 1024, cut)), (err) => err === cut);
    assert.equal(await storage.stat('early.mp4'), undefined);
    const body = new PassThrough();
    const writing = storage.write('closed.mp4', body);
    body.write(randomBytes(6 * MiB));
    setTimeout(() => body.destroy(), 50);
    await assert.rejects(writing);
    assert.equal(await storage.stat('closed.mp4'), undefined);
  });

  it('leaves no object when the byte count is not the expected one', async () => {
    const storage = open();
    await assert.rejects(storage.write('short.mp4', chunked(randomBytes(6 * MiB)), { expectedBytes: 7 * MiB }), (err) => {
      assert.ok(err instanceof SizeMismatchError);
      assert.equal(err.received, 6 * MiB);
      return true;
    });
    await assert.rejects(storage.write('long.mp4', chunked(randomBytes(2 * MiB)), { expectedBytes: MiB }), SizeMismatchError);
    assert.equal(await storage.stat('short.mp4'), undefined);
    assert.equal(await storage.stat('long.mp4'), undefined);
    await assert.rejects(storage.write('x.mp4', chunked(Buffer.from('x')), { resumeFrom: 10 }), StorageError);
  });

  it('lets a re-run skip: a fresh instance sees the sha256 without downloading', async () => {
    const s = settings();
    const creds = { credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } };
    const data = randomBytes(6 * MiB);
    const first = await new S3Storage(s, creds).write('v.mp4', chunked(data, 256 * 1024));
    const rerun = new S3Storage(s, creds);
    const existing = await rerun.stat('v.mp4');
    assert.equal(existing?.sha256, first.sha256);
    assert.equal(existing?.bytes, data.length);

    // A sidecar that vouches for another version of the object is not trusted.
    await rerun.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${s.prefix}v.mp4`, Body: randomBytes(data.length) }));
    assert.equal((await rerun.stat('v.mp4'))?.sha256, undefined, 'ETag changed: the sidecar no longer counts');

    // An object without a sidecar (e.g. the process died between the two PUTs) falls back
    // to the manifest row that vouches for it.
    const plain = Buffer.from('no metadata here');
    await rerun.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${s.prefix}plain.mp4`, Body: plain }));
    assert.equal((await rerun.stat('plain.mp4'))?.sha256, undefined);
    await rerun.appendManifest(manifestRow(1, { file: 'plain.mp4', bytes: plain.length, sha256: sha(plain) }));
    assert.equal((await rerun.stat('plain.mp4'))?.sha256, sha(plain));
  });

  it('parts go unsigned but checked: the server refuses a body whose CRC32 does not match', async () => {
    // S3Storage's client signs part bodies as UNSIGNED-PAYLOAD where a CRC32 header is present
    // (checksumInsteadOfPayloadHash): the server's own CRC check is what catches corruption.
    const storage = open();
    const Key = `${storage.location.slice(`s3://${BUCKET}/`.length)}corrupt.mp4`;
    const body = randomBytes(1000);
    const wrong = Buffer.alloc(4);
    wrong.writeUInt32BE((crc32(body) ^ 1) >>> 0);
    await assert.rejects(
      storage.client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key, Body: body, ChecksumAlgorithm: 'CRC32', ChecksumCRC32: wrong.toString('base64') }),
      ),
      (err: Error) => /checksum|digest/i.test(`${err.name} ${err.message}`),
    );
    assert.equal(await headOrUndefined(storage, Key), undefined);
    const right = Buffer.alloc(4);
    right.writeUInt32BE(crc32(body) >>> 0);
    await storage.client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key, Body: body, ChecksumAlgorithm: 'CRC32', ChecksumCRC32: right.toString('base64') }),
    );
    assert.equal((await headOrUndefined(storage, Key))?.ContentLength, 1000);
  });

  it('discardPartial() aborts a multipart upload left by a dead process', async () => {
    const storage = open();
    const key = `${storage.location.slice(`s3://${BUCKET}/`.length)}orphan.mp4`;
    await storage.client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
    assert.equal((await pendingUploads(storage, key)).length, 1);
    await storage.discardPartial('orphan.mp4');
    assert.deepEqual(await pendingUploads(storage, key), []);
  });

  it('openStorage() uses the standard AWS credential chain (environment)', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY, profile: process.env.AWS_PROFILE };
    process.env.AWS_ACCESS_KEY_ID = server.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = server.secretAccessKey;
    delete process.env.AWS_PROFILE;
    try {
      const storage = openStorage({ storage: 's3', s3: settings() });
      assert.ok(storage instanceof S3Storage);
      await storage.checkWritable();
      const r = await storage.write('env.mp4', chunked(Buffer.from('env')));
      const got = await (storage as S3Storage).client.send(
        new GetObjectCommand({ Bucket: BUCKET, Key: r.location.slice(`s3://${BUCKET}/`.length) }),
      );
      assert.equal(await got.Body?.transformToString(), 'env');
    } finally {
      for (const [name, value] of [
        ['AWS_ACCESS_KEY_ID', saved.id],
        ['AWS_SECRET_ACCESS_KEY', saved.secret],
        ['AWS_PROFILE', saved.profile],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe('S3Storage.checkWritable() says what is wrong', () => {
  it('names a bucket that does not exist', async () => {
    const storage = open({ bucket: 'no-such-bucket-here' });
    await assert.rejects(storage.checkWritable(), (err) => {
      assert.ok(err instanceof StorageError);
      assert.match(err.message, /S3 bucket "no-such-bucket-here" does not exist at http:\/\/127\.0\.0\.1:\d+/);
      return true;
    });
  });

  it('says the credentials were rejected, without revealing them', async () => {
    const secret = 'WRONGsecretWRONGsecret42';
    const storage = open({}, { credentials: { accessKeyId: 'AKIAWRONGWRONG', secretAccessKey: secret } });
    await assert.rejects(storage.checkWritable(), (err) => {
      assert.ok(err instanceof StorageError);
      assert.match(err.message, /S3 credentials were rejected by http:\/\/127\.0\.0\.1:\d+ \(InvalidAccessKeyId\)/);
      assert.ok(!err.message.includes(secret) && !err.message.includes('AKIAWRONGWRONG'));
      return true;
    });
    const wrongSecret = open({}, { credentials: { accessKeyId: server.accessKeyId, secretAccessKey: secret } });
    await assert.rejects(wrongSecret.checkWritable(), /S3 credentials were rejected .*\(SignatureDoesNotMatch\)/);
  });

  it('says the endpoint cannot be reached', async () => {
    const port = await freePort();
    const storage = open({ endpoint: `http://127.0.0.1:${port}` }, { maxAttempts: 1 });
    await assert.rejects(storage.checkWritable(), (err) => {
      assert.ok(err instanceof StorageError);
      assert.match(err.message, new RegExp(`cannot reach the S3 endpoint http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`));
      return true;
    });
  });
});
