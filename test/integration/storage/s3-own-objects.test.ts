// docs/files.md "A file reelflow did not write is never replaced" on S3 (MinIO, a real server): an object under an output name that reelflow
// did not write is never replaced unless output.overwrite, and a body that does not start as a
// video is never committed.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { storedVideoCheck } from '../../../gateway/video-check';
import { StorageError } from '../../../storage/index';
import { S3Storage } from '../../../storage/s3';
import { startS3Server, type S3TestServer } from '../../support/s3-server';
import { chunked, manifestRow } from '../../support/storage';

const BUCKET = 'renders';
const MP4_HEAD = Buffer.from('000000146674797069736f6d00000200', 'hex');
const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

describe('S3 storage keeps what is not its own (MinIO)', () => {
  let server: S3TestServer;
  before(async () => {
    server = await startS3Server({ kind: 'minio' });
    await server.createBucket(BUCKET);
  });
  after(async () => {
    await server?.stop();
  });

  function open(): S3Storage {
    return new S3Storage(
      {
        bucket: BUCKET,
        prefix: `job-${randomBytes(3).toString('hex')}/`,
        region: server.region,
        endpoint: server.endpoint,
        forcePathStyle: true,
      },
      { credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } },
    );
  }

  async function body(storage: S3Storage, name: string): Promise<Buffer> {
    const key = `${storage.location.slice(`s3://${BUCKET}/`.length)}${name}`;
    const got = await storage.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return Buffer.from(await got.Body!.transformToByteArray());
  }

  it('an object put there by someone else: the write fails naming it and the object stays; output.overwrite replaces it', async () => {
    const storage = open();
    const key = `${storage.location.slice(`s3://${BUCKET}/`.length)}hero.mp4`;
    await storage.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'the user’s own hero video' }));
    const video = Buffer.concat([MP4_HEAD, randomBytes(5000)]);
    await assert.rejects(storage.write('hero.mp4', chunked(video)), (e: unknown) => {
      assert.ok(e instanceof StorageError, String(e));
      assert.ok(e.message.includes(`s3://${BUCKET}/${key}`), e.message);
      assert.match(e.message, /reelflow did not write it/);
      return true;
    });
    assert.equal((await body(storage, 'hero.mp4')).toString(), 'the user’s own hero video');
    assert.equal((await storage.write('hero.mp4', chunked(video), { overwrite: true })).sha256, sha(video));
    assert.equal(sha(await body(storage, 'hero.mp4')), sha(video));
  });

  it('its own object (sidecar, manifest row) is replaced', async () => {
    const storage = open();
    const first = Buffer.concat([MP4_HEAD, randomBytes(3000)]);
    const written = await storage.write('clip.mp4', chunked(first));
    await storage.appendManifest(manifestRow(1, { file: 'clip.mp4', bytes: written.bytes, sha256: written.sha256 }));
    const second = Buffer.concat([MP4_HEAD, randomBytes(4000)]);
    assert.equal((await storage.write('clip.mp4', chunked(second))).sha256, sha(second));
  });

  it('a body that does not start as a video is not committed', async () => {
    const storage = open();
    const html = Buffer.from(`<!doctype html><html>${'x'.repeat(4000)}</html>`);
    await assert.rejects(
      storage.write('page.mp4', chunked(html), { checkStart: storedVideoCheck('page.mp4') }),
      /does not start as a video/,
    );
    assert.equal(await storage.stat('page.mp4'), undefined);
  });
});
