// The S3 manifest log read from a cursor (Storage.readManifestSince), against real S3-compatible
// servers (REELFLOW_S3_SERVERS narrows the list), and stat() of a video without a sidecar, which
// looks the sha256 up in the rows read since its last look rather than in the whole manifest.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3OutputSettings } from '../../../jobfile/plan';
import { S3Storage } from '../../../storage/s3';
import { s3ServerKinds, startS3Server, type S3ServerKind, type S3TestServer } from '../../support/s3-server';
import { manifestRow } from '../../support/storage';

const BUCKET = 'renders';
const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

for (const kind of s3ServerKinds()) cursorSuite(kind);

function cursorSuite(kind: S3ServerKind): void {
  let server: S3TestServer;
  before(async () => {
    server = await startS3Server({ kind });
    await server.createBucket(BUCKET);
  });
  after(async () => {
    await server?.stop();
  });

  const settings = (): S3OutputSettings => ({
    bucket: BUCKET,
    prefix: `cursor-${randomBytes(3).toString('hex')}/`,
    region: server.region,
    endpoint: server.endpoint,
    forcePathStyle: true,
  });
  const open = (s: S3OutputSettings) =>
    new S3Storage(s, { credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } });

  /** The keys of the GetObject requests `storage` sends, in order. */
  function recordGets(storage: S3Storage): string[] {
    const keys: string[] = [];
    storage.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'GetObjectCommand') keys.push((args.input as { Key: string }).Key);
        return next(args);
      },
      { step: 'initialize', name: 'testRecordGets' },
    );
    return keys;
  }

  /** A row object put under a name of the writer's choosing (a machine whose clock is behind names its rows early). */
  async function putRowNamed(storage: S3Storage, s: S3OutputSettings, name: string, n: number) {
    const Key = `${s.prefix}manifest/${name}`;
    await storage.client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: `${JSON.stringify(manifestRow(n))}\n` }));
  }

  describe(`S3Storage.readManifestSince() (${kind})`, () => {
    it('returns only the rows appended since the cursor, and goes on from where it got to', async () => {
      const s = settings();
      const writer = open(s);
      const reader = open(s);
      await writer.appendManifest(manifestRow(1));
      await writer.appendManifest(manifestRow(2));
      const first = await reader.readManifestSince(undefined);
      assert.equal(first.fromStart, true);
      assert.deepEqual(
        first.rows.map((r) => r.key),
        ['k1', 'k2'],
      );
      assert.notEqual(first.cursor, undefined, 'a cursor to go on from');

      await writer.appendManifest(manifestRow(3));
      const next = await reader.readManifestSince(first.cursor);
      assert.equal(next.fromStart, false, 'the rows read before stay valid');
      assert.deepEqual(
        next.rows.map((r) => r.key),
        ['k3'],
      );
      const none = await reader.readManifestSince(next.cursor);
      assert.deepEqual([none.fromStart, none.rows], [false, []]);
    });

    it('goes on from its cursor past a snapshot, fetching neither the snapshot nor a row it read', async () => {
      const s = settings();
      const writer = open(s);
      await writer.appendManifest(manifestRow(1));
      await writer.snapshotManifest();
      const reader = open(s);
      const gets = recordGets(reader);
      const first = await reader.readManifestSince(undefined);
      assert.deepEqual(
        first.rows.map((r) => r.key),
        ['k1'],
      );
      await writer.appendManifest(manifestRow(2));
      await writer.snapshotManifest();
      gets.length = 0;
      const next = await reader.readManifestSince(first.cursor);
      assert.deepEqual([next.fromStart, next.rows.map((r) => r.key)], [false, ['k2']]);
      assert.equal(gets.length, 1, `only the new row object: ${gets.join(', ')}`);
      assert.match(gets[0]!, /\/manifest\/[^/]+\.json$/);
    });

    it('starts over, with every row, when a row appears before the cursor (a clock behind) or rows are removed', async () => {
      const s = settings();
      const writer = open(s);
      const reader = open(s);
      await writer.appendManifest(manifestRow(1));
      const first = await reader.readManifestSince(undefined);
      await putRowNamed(writer, s, '20000101T000000000Z-000000-00000000.json', 2);
      const late = await reader.readManifestSince(first.cursor);
      assert.equal(late.fromStart, true, 'a row named before the cursor cannot be told apart otherwise');
      assert.deepEqual(late.rows.map((r) => r.key).sort(), ['k1', 'k2']);
      const settled = await reader.readManifestSince(late.cursor);
      assert.deepEqual([settled.fromStart, settled.rows], [false, []]);
    });
  });

  describe(`S3Storage.stat() of a video without a sidecar (${kind})`, () => {
    it('reads only the manifest rows since its last look, not the whole manifest again', async () => {
      const s = settings();
      const writer = open(s);
      const plain = Buffer.from('no sidecar');
      await writer.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${s.prefix}plain.mp4`, Body: plain }));
      await writer.appendManifest(manifestRow(1, { file: 'plain.mp4', bytes: plain.length, sha256: sha(plain) }));
      await writer.snapshotManifest();
      const reader = open(s);
      const gets = recordGets(reader);
      assert.equal((await reader.stat('plain.mp4'))?.sha256, sha(plain));
      assert.deepEqual(gets, [`${s.prefix}manifest.jsonl`], 'the snapshot, once');

      // Another item ends and the job's end rewrites the snapshot: the reader needs one new row, not it.
      await writer.appendManifest(manifestRow(2));
      await writer.snapshotManifest();
      gets.length = 0;
      assert.equal((await reader.stat('plain.mp4'))?.sha256, sha(plain));
      assert.equal(gets.length, 1, `one row object, not the whole manifest again: ${gets.join(', ')}`);
      assert.match(gets[0]!, /\/manifest\/[^/]+\.json$/);
    });
  });
}
