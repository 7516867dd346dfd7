// Pure logic of the job-inputs store: where a job's inputs go, and the index object's bytes.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { OutputSettings } from '../../../jobfile/plan';
import {
  InputDigestError,
  checkDigest,
  decodeInputIndex,
  encodeInputIndex,
  inputLocationFor,
  parseInputLocation,
  type InputEntry,
} from '../../../storage/inputs/refs';
import { changedPaths } from '../../../storage/inputs/publish';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const local: OutputSettings = { storage: 'local', dir: '/srv/out/job' };
const s3: OutputSettings = {
  storage: 's3',
  s3: { bucket: 'renders', prefix: 'spring/2026-03-01/', region: 'eu-west-1', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true },
};

describe('where a job stores its inputs', () => {
  it('local output with no location named: nowhere, workers read the paths as before', () => {
    assert.equal(inputLocationFor(local, undefined), undefined);
    assert.equal(inputLocationFor(local, '  '), undefined);
  });

  it('S3 output: under the reserved prefix beside the outputs, same bucket and endpoint', () => {
    assert.deepEqual(inputLocationFor(s3, undefined), {
      kind: 's3',
      s3: { ...s3.s3, prefix: 'spring/2026-03-01/.reelflow/inputs/' },
    });
  });

  it('a named location wins: a directory (made absolute) or an s3:// URL with the AWS variables', () => {
    assert.deepEqual(parseInputLocation('shared/inputs', {}, '/home/u'), { kind: 'dir', dir: '/home/u/shared/inputs' });
    assert.deepEqual(inputLocationFor(s3, '/mnt/fleet/inputs'), { kind: 'dir', dir: '/mnt/fleet/inputs' });
    assert.deepEqual(parseInputLocation('s3://fleet-bucket/reelflow/inputs/', { AWS_REGION: 'eu-central-1' }), {
      kind: 's3',
      s3: { bucket: 'fleet-bucket', prefix: 'reelflow/inputs/', region: 'eu-central-1', forcePathStyle: false },
    });
    assert.deepEqual(parseInputLocation('s3://b', { AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000' }), {
      kind: 's3',
      s3: { bucket: 'b', prefix: '', region: 'us-east-1', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true },
    });
    assert.throws(() => parseInputLocation('https://example.com/x'), /shared directory or an s3:\/\/bucket/);
    assert.throws(() => parseInputLocation('s3:///nobucket'), /not an S3 location/);
    assert.throws(
      () => parseInputLocation('s3://b', { AWS_ENDPOINT_URL: 'http://user:secret@127.0.0.1:9000' }),
      (error: Error) => /carries credentials/.test(error.message) && !error.message.includes('secret@'),
    );
  });
});

describe('the index object', () => {
  const files = new Map<string, InputEntry>([
    ['/jobs/b/ref.png', { sha256: sha('png'), bytes: 3 }],
    ['/jobs/b/job.yaml', { sha256: sha('yaml'), bytes: 4, text: true }],
  ]);

  it('is canonical: the same inputs in any order give the same bytes, so the same digest', () => {
    const reversed = new Map([...files].reverse());
    assert.ok(encodeInputIndex('/jobs/b/job.yaml', files).equals(encodeInputIndex('/jobs/b/job.yaml', reversed)));
  });

  it('decodes only when the bytes have the digest they are asked for', () => {
    const bytes = encodeInputIndex('/jobs/b/job.yaml', files);
    const digest = createHash('sha256').update(bytes).digest('hex');
    assert.deepEqual(decodeInputIndex(bytes, digest, 's3://b/p/').files['/jobs/b/ref.png'], { sha256: sha('png'), bytes: 3 });
    const other = sha('other');
    assert.throws(
      () => decodeInputIndex(bytes, other, 's3://b/p/'),
      (error: Error) => error instanceof InputDigestError && error.message.includes(other) && error.message.includes('s3://b/p/'),
    );
  });

  it('refuses an index of another shape, and digests that are not 64 hex digits', () => {
    const bytes = Buffer.from(JSON.stringify({ reelflowInputs: 2, jobFile: '/j.yaml', files: {} }));
    assert.throws(() => decodeInputIndex(bytes, createHash('sha256').update(bytes).digest('hex'), '/dir'), /not one this reelflow reads/);
    assert.throws(() => checkDigest('../../etc/passwd'), /not a sha256 digest/);
    assert.throws(() => checkDigest(sha('x').toUpperCase()), /not a sha256 digest/);
  });

  it('tells which paths changed between the started version and the files now', () => {
    const before = JSON.parse(encodeInputIndex('/jobs/b/job.yaml', files).toString('utf8')) as Parameters<typeof changedPaths>[0];
    const now = new Map(files);
    assert.deepEqual(changedPaths(before, now), []);
    now.set('/jobs/b/job.yaml', { sha256: sha('edited'), bytes: 6, text: true });
    now.set('/jobs/b/rows.csv', { sha256: sha('rows'), bytes: 4, text: true });
    now.delete('/jobs/b/ref.png');
    assert.deepEqual(changedPaths(before, now), ['/jobs/b/job.yaml', '/jobs/b/ref.png', '/jobs/b/rows.csv']);
  });
});
