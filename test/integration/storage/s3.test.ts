// S3Storage against real S3-compatible servers (MinIO from scripts/s3-server.sh, versitygw from
// scripts/versitygw.sh; REELFLOW_S3_SERVERS narrows the list). No mocks. Where the test needs to see
// or change what goes over the wire, a recording proxy sits between the client and the server.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import {
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { latestRowByKey, type ManifestRow } from '../../../storage/manifest/row';
import { parseManifest } from '../../../storage/manifest/codec';
import { SizeMismatchError, StorageError, openStorage } from '../../../storage/index';
import { S3Storage, type S3StorageOptions } from '../../../storage/s3';
import type { S3OutputSettings } from '../../../jobfile/plan';
import { tempDir } from '../../support/jobs';
import {
  freePort,
  s3ServerKinds,
  startS3Server,
  startS3TrafficRecorder,
  type RecordedRequest,
  type S3ServerKind,
  type S3TestServer,
  type S3TrafficRecorder,
} from '../../support/s3-server';

import { chunked, manifestRow } from '../../support/storage';

const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');
const MiB = 1024 * 1024;
const BUCKET = 'renders';

for (const kind of s3ServerKinds()) s3Suite(kind);

function s3Suite(kind: S3ServerKind): void {
  let server: S3TestServer;

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

  /** The object key of an output name or reelflow file in `storage`'s prefix. */
  function keyOf(storage: S3Storage, name: string): string {
    return `${storage.location.slice(`s3://${BUCKET}/`.length)}${name}`;
  }

  before(async () => {
    server = await startS3Server({ kind });
    await server.createBucket(BUCKET);
  });
  after(async () => {
    await server?.stop();
  });

  describe(`S3Storage on a real S3 server (${kind})`, () => {
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
        [data.subarray(0, 5 * MiB), data.subarray(5 * MiB, 10 * MiB), data.subarray(10 * MiB)].map((part) => `${sha(part)} no-crc`),
        'by default each part is signed with its own sha256, which the server verifies; no CRC32 header',
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
        (await storage.readManifest()).rows.map((r) => r.key),
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
      const fromA = (await a.readManifest()).rows;
      assert.deepEqual(
        fromA.slice(0, 2).map((r) => r.key),
        ['k1', 'k2'],
      );
      assert.deepEqual(new Set(fromA.map((r) => r.key)), new Set(['k1', 'k2', 'k3', 'k4', 'k5', 'k6']));
      assert.deepEqual((await new S3Storage(s, creds).readManifest()).rows, fromA);
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

  describe(`S3Storage.checkWritable() says what is wrong (${kind})`, () => {
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
        // versitygw names an unknown access key XAdminUserNotFound (with HTTP 404, which is not a missing object).
        assert.match(err.message, /S3 credentials were rejected by http:\/\/127\.0\.0\.1:\d+ \((InvalidAccessKeyId|XAdminUserNotFound)\)/);
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

  describe(`request checksums on the wire (${kind})`, () => {
    let recorder: S3TrafficRecorder;
    let scratch: string;
    before(async () => {
      recorder = await startS3TrafficRecorder(server.endpoint);
      scratch = tempDir('reelflow-s3-checksums-');
    });
    after(async () => {
      await recorder?.close();
    });

    /** S3 storage whose requests go through the recorder; `since()` gives the requests it sent so far. */
    function recorded(): { storage: S3Storage; since: () => RecordedRequest[] } {
      const from = recorder.requests.length;
      return { storage: open({ endpoint: recorder.endpoint }), since: () => recorder.requests.slice(from) };
    }

    const isUploadPart = (r: RecordedRequest) => r.method === 'PUT' && /[?&]partNumber=/.test(r.url);
    const isPutObject = (r: RecordedRequest) => r.method === 'PUT' && !isUploadPart(r);
    const isCreateUpload = (r: RecordedRequest) => r.method === 'POST' && /[?&]uploads(=|&|$)/.test(r.url);
    const checksumHeaders = (r: RecordedRequest) =>
      Object.keys(r.headers).filter((h) => h.startsWith('x-amz-checksum-') || h === 'x-amz-sdk-checksum-algorithm');

    /**
     * Runs `body` with these variables set (undefined: unset) and an AWS config file holding
     * `config` (none: an empty one, so a developer's own ~/.aws/config cannot decide), then restores them.
     */
    async function withAwsConfig<T>(vars: Record<string, string | undefined>, config: string, body: () => Promise<T>): Promise<T> {
      const configFile = join(scratch, `config-${randomBytes(3).toString('hex')}`);
      writeFileSync(configFile, config);
      const all: Record<string, string | undefined> = { AWS_REQUEST_CHECKSUM_CALCULATION: undefined, AWS_PROFILE: undefined, ...vars };
      all.AWS_CONFIG_FILE = configFile;
      const saved = Object.fromEntries(Object.keys(all).map((k) => [k, process.env[k]]));
      const apply = (values: Record<string, string | undefined>) => {
        for (const [k, v] of Object.entries(values)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      };
      apply(all);
      try {
        return await body();
      } finally {
        apply(saved);
      }
    }

    it('sends no checksum header by default, and signs every body with its sha256', async () => {
      await withAwsConfig({}, '', async () => {
        const { storage, since } = recorded();
        const multi = randomBytes(11 * MiB);
        await storage.write('multi.mp4', chunked(multi, 256 * 1024));
        await storage.write('single.mp4', chunked(Buffer.from('one small part')));
        await storage.appendManifest(manifestRow(1));
        const sent = since();
        const uploads = sent.filter((r) => isUploadPart(r) || isPutObject(r) || isCreateUpload(r));
        assert.equal(sent.filter(isUploadPart).length, 3, 'three parts');
        assert.equal(sent.filter(isPutObject).length, 4, 'one-part video, two sidecars, a manifest row');
        assert.deepEqual(
          uploads.filter((r) => checksumHeaders(r).length > 0).map((r) => `${r.method} ${r.url} ${checksumHeaders(r).join(',')}`),
          [],
          'no x-amz-checksum-* or x-amz-sdk-checksum-algorithm header',
        );
        for (const r of [...sent.filter(isUploadPart), ...sent.filter(isPutObject)]) {
          assert.match(String(r.headers['x-amz-content-sha256']), /^[0-9a-f]{64}$/, `${r.url}: payload signed with its sha256`);
        }
        assert.equal(sent.filter(isUploadPart)[0]?.headers['x-amz-content-sha256'], sha(multi.subarray(0, 5 * MiB)));

        const before = since().length;
        await storage.snapshotManifest();
        const snapshotPut = since().slice(before).filter(isPutObject);
        assert.equal(snapshotPut.length, 1);
        assert.deepEqual(checksumHeaders(snapshotPut[0]!), [], 'manifest.jsonl too');
      });
    });

    it('by default a byte changed in transit is refused: the signed payload is the integrity check', async () => {
      await withAwsConfig({}, '', async () => {
        const { storage } = recorded();
        recorder.corruptNext((r) => isUploadPart(r) && /[?&]partNumber=2(&|$)/.test(r.url));
        await assert.rejects(storage.write('bent.mp4', chunked(randomBytes(11 * MiB), 256 * 1024)));
        assert.equal(await storage.stat('bent.mp4'), undefined, 'no object');
        assert.deepEqual(await pendingUploads(storage, keyOf(storage, 'bent.mp4')), [], 'the upload was aborted');

        recorder.corruptNext(isPutObject);
        await assert.rejects(storage.write('bent-single.mp4', chunked(Buffer.from('a one-part video'))));
        assert.equal(await storage.stat('bent-single.mp4'), undefined, 'no object');
      });
    });

    it('AWS_REQUEST_CHECKSUM_CALCULATION=when_supported: CRC32 headers the server verifies, parts sent UNSIGNED-PAYLOAD', async () => {
      await withAwsConfig({ AWS_REQUEST_CHECKSUM_CALCULATION: 'when_supported' }, '', async () => {
        const { storage, since } = recorded();
        const data = randomBytes(11 * MiB);
        const written = await storage.write('crc.mp4', chunked(data, 256 * 1024));
        assert.equal(written.sha256, sha(data));
        const sent = since();
        assert.equal(sent.filter(isCreateUpload)[0]?.headers['x-amz-checksum-algorithm'], 'CRC32');
        assert.deepEqual(
          sent.filter(isUploadPart).map((r) => [r.headers['x-amz-content-sha256'], typeof r.headers['x-amz-checksum-crc32']]),
          [
            ['UNSIGNED-PAYLOAD', 'string'],
            ['UNSIGNED-PAYLOAD', 'string'],
            ['UNSIGNED-PAYLOAD', 'string'],
          ],
        );
        assert.ok(
          sent.filter(isPutObject).every((r) => typeof r.headers['x-amz-checksum-crc32'] === 'string'),
          'the SDK adds one to the sidecar',
        );

        recorder.corruptNext((r) => isUploadPart(r) && /[?&]partNumber=2(&|$)/.test(r.url));
        await assert.rejects(storage.write('crc-bent.mp4', chunked(randomBytes(11 * MiB), 256 * 1024)), (err: Error) =>
          /checksum|digest|crc/i.test(`${err.name} ${err.message}`),
        );
        assert.equal(await storage.stat('crc-bent.mp4'), undefined, 'no object');
      });
    });

    it("the AWS config file's request_checksum_calculation is honoured as the SDK honours it, the environment first", async () => {
      const config = [
        '[default]',
        'request_checksum_calculation = when_supported',
        '[profile plain]',
        'request_checksum_calculation = when_required',
        '',
      ].join('\n');
      const crcOnPut = async () => {
        const { storage, since } = recorded();
        await storage.write('probe.mp4', chunked(Buffer.from('probe')));
        const put = since().find(isPutObject);
        assert.ok(put, 'a PutObject was sent');
        return typeof put.headers['x-amz-checksum-crc32'] === 'string';
      };
      assert.equal(await withAwsConfig({}, config, crcOnPut), true, 'the default profile says when_supported');
      assert.equal(await withAwsConfig({ AWS_PROFILE: 'plain' }, config, crcOnPut), false, 'AWS_PROFILE picks the profile');
      assert.equal(
        await withAwsConfig({ AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED' }, config, crcOnPut),
        false,
        'the environment wins',
      );
    });
  });

  describe(`manifest.jsonl: the manifest as one object (${kind})`, () => {
    const creds = () => ({ credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } });

    /** Counts the GetObject requests `storage` sends. */
    function countGets(storage: S3Storage): () => number {
      let gets = 0;
      storage.client.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'GetObjectCommand') gets++;
          return next(args);
        },
        { step: 'initialize', name: 'testCountGets' },
      );
      return () => gets;
    }

    const latest = (rows: ManifestRow[]) => [...latestRowByKey(rows).values()].sort((a, b) => a.index - b.index);

    it('snapshotManifest() leaves the latest row of each item, in item order, in the local manifest format', async () => {
      const storage = open();
      const failed = manifestRow(2, { state: 'failed', error: { kind: 'render_failed', message: 'no' } });
      await storage.appendManifest(failed);
      await storage.appendManifest(manifestRow(1));
      await storage.appendManifest(manifestRow(2, { task_id: 't2-again' }));
      assert.deepEqual(await storage.snapshotManifest(), { location: `${storage.location}manifest.jsonl`, items: 2 });

      const got = await storage.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: keyOf(storage, 'manifest.jsonl') }));
      assert.equal(got.ContentType, 'application/x-ndjson');
      const text = (await got.Body?.transformToString()) ?? '';
      assert.equal(text.split('\n').length, 3, 'one line per item, each ending in a newline');
      assert.deepEqual(parseManifest(Buffer.from(text), { file: 'manifest.jsonl', firstLine: 1 }).rows, [
        manifestRow(1),
        manifestRow(2, { task_id: 't2-again' }),
      ]);
      assert.deepEqual(await storage.list(), [], 'it is not an output');
      await assert.rejects(storage.write('manifest.jsonl', chunked(Buffer.from('x'))), StorageError);
    });

    it('an output with no row yet gets an empty manifest.jsonl', async () => {
      const storage = open();
      assert.deepEqual(await storage.snapshotManifest(), { location: `${storage.location}manifest.jsonl`, items: 0 });
      const got = await storage.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: keyOf(storage, 'manifest.jsonl') }));
      assert.equal(await got.Body?.transformToString(), '');
      assert.deepEqual((await storage.readManifest()).rows, []);
    });

    it('readers take the snapshot and only the rows after it; the next snapshot folds those in', async () => {
      const s = settings();
      const writer = new S3Storage(s, creds());
      for (const i of [1, 2, 3]) await writer.appendManifest(manifestRow(i));
      await writer.snapshotManifest();
      const failed = manifestRow(2, { state: 'failed', error: { kind: 'render_failed', message: 'again' } });
      await writer.appendManifest(failed);
      await writer.appendManifest(manifestRow(4));
      const expected = [manifestRow(1), failed, manifestRow(3), manifestRow(4)];

      const reader = new S3Storage(s, creds());
      const gets = countGets(reader);
      assert.deepEqual(latest((await reader.readManifest()).rows), expected);
      assert.equal(gets(), 3, 'the snapshot and the two rows after it, not the three it folds in');
      assert.deepEqual(latest((await reader.readManifest()).rows), expected);
      assert.equal(gets(), 3, 'an unchanged snapshot (same ETag) is not fetched again');

      assert.deepEqual(await reader.snapshotManifest(), { location: `${reader.location}manifest.jsonl`, items: 4 });
      const fresh = new S3Storage(s, creds());
      const freshGets = countGets(fresh);
      assert.deepEqual((await fresh.readManifest()).rows, expected, 'the rebuilt snapshot alone: every item once, in order');
      assert.equal(freshGets(), 1);
    });

    it('a row named before the snapshot but written after it (a clock behind) is still read', async () => {
      const s = settings();
      const writer = new S3Storage(s, creds());
      await writer.appendManifest(manifestRow(1));
      await writer.appendManifest(manifestRow(2));
      await writer.snapshotManifest();
      const late = manifestRow(3, { finished_at: new Date().toISOString() });
      await writer.client.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `${s.prefix}manifest/20000101T000000000Z-000000-00000000.json`,
          Body: `${JSON.stringify(late)}\n`,
        }),
      );
      const reader = new S3Storage(s, creds());
      assert.deepEqual(latest((await reader.readManifest()).rows), [manifestRow(1), manifestRow(2), late]);
      await reader.snapshotManifest();
      assert.deepEqual((await new S3Storage(s, creds()).readManifest()).rows, [manifestRow(1), manifestRow(2), late]);
    });

    it('a row object that is no row (planted, cut short) is skipped and named; the snapshot leaves it out', async () => {
      const s = settings();
      const writer = new S3Storage(s, creds());
      await writer.appendManifest(manifestRow(1));
      const planted = {
        bad: `${s.prefix}manifest/20000101T000000000Z-000000-00000001.json`,
        outside: `${s.prefix}manifest/20000101T000000000Z-000000-00000002.json`,
      };
      await writer.client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: planted.bad, Body: '{"key":"old","state":"failed","cost_usd":0}\n' }),
      );
      await writer.client.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: planted.outside,
          Body: `${JSON.stringify(manifestRow(2, { file: '../../elsewhere.mp4' }))}\n`,
        }),
      );
      const read = await new S3Storage(s, creds()).readManifest();
      assert.deepEqual(read.rows, [manifestRow(1)]);
      assert.deepEqual(
        read.skipped.map((k) => k.where),
        [`s3://${BUCKET}/${planted.bad}`, `s3://${BUCKET}/${planted.outside}`],
      );
      assert.match(read.skipped[0]!.problem, /missing "id"/);
      assert.match(read.skipped[1]!.problem, /"file": must be a relative path inside the output location/);
      assert.deepEqual(await writer.snapshotManifest(), { location: `${writer.location}manifest.jsonl`, items: 1 });
    });

    it('stat() finds the sha256 of a video without a sidecar in the snapshot too', async () => {
      const s = settings();
      const writer = new S3Storage(s, creds());
      const plain = Buffer.from('no sidecar');
      await writer.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${s.prefix}plain.mp4`, Body: plain }));
      await writer.appendManifest(manifestRow(1, { file: 'plain.mp4', bytes: plain.length, sha256: sha(plain) }));
      await writer.snapshotManifest();
      const reader = new S3Storage(s, creds());
      const gets = countGets(reader);
      assert.equal((await reader.stat('plain.mp4'))?.sha256, sha(plain));
      assert.equal(gets(), 1, 'from the snapshot alone');
    });
  });
}
