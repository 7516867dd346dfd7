// A job with S3 output as a user runs it: each real S3-compatible server (MinIO, versitygw), the
// simulator, Temporal, and the built command. A job that ends leaves manifest.jsonl in the bucket.
// Misconfigured buckets fail before any task is created.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { parseManifest } from '../../storage/manifest/codec';
import { startSimulator, type SimHandleExt } from '../../sim';
import { runCli, startCli } from '../support/cli';
import { s3ServerKinds, startS3Server, type S3ServerKind, type S3TestServer } from '../support/s3-server';
import { startTestTemporal, type TestTemporal } from '../support/temporal';
import { tempDir, writeJob } from '../support/jobs';

const KEY = 'sk-test-s3-e2e-0000000000';

function s3Block(s3: S3TestServer, bucket: string, endpoint = s3.endpoint): string {
  return [
    'output:',
    '  storage: s3',
    '  s3:',
    `    bucket: ${bucket}`,
    '    prefix: "{job}/"',
    `    region: ${s3.region}`,
    `    endpoint: ${endpoint}`,
    '    force_path_style: true',
  ].join('\n');
}

for (const kind of s3ServerKinds()) s3EndToEnd(kind);

function s3EndToEnd(kind: S3ServerKind): void {
  describe(`S3 output end to end (${kind})`, () => {
    let temporal: TestTemporal;
    let sim: SimHandleExt;
    let s3: S3TestServer;
    let env: NodeJS.ProcessEnv;
    let client: S3Client;

    before(async () => {
      [temporal, sim, s3] = await Promise.all([
        startTestTemporal(),
        startSimulator({ ports: [0], keys: [KEY], renderMs: [500, 1000], seed: 9 }),
        startS3Server({ kind }),
      ]);
      await s3.createBucket('renders');
      env = { ...temporal.env, GATEWAY_API_KEY: KEY, ...s3.env };
      client = s3.client();
    });
    after(async () => {
      client?.destroy();
      await Promise.all([sim?.close(), s3?.stop(), temporal?.stop()]);
    });

    const creates = () => Object.values(sim.stats().createsByPrompt).reduce((a, b) => a + b, 0);

    /** The manifest.jsonl object a job left at its prefix, as rows; undefined when there is none. */
    async function manifestObject(prefix: string) {
      try {
        const got = await client.send(new GetObjectCommand({ Bucket: 'renders', Key: `${prefix}manifest.jsonl` }));
        return parseManifest(Buffer.from(await got.Body!.transformToByteArray()), { file: 'manifest.jsonl', firstLine: 1 }).rows;
      } catch (err) {
        if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
        throw err;
      }
    }

    /** Writes a job with S3 output under `{job}/` (instead of writeJob's local output). */
    async function s3Job(spec: Parameters<typeof writeJob>[1]): Promise<string> {
      const { readFileSync, writeFileSync } = await import('node:fs');
      const job = writeJob(tempDir(), { ...spec, extra: s3Block(s3, 'renders') });
      writeFileSync(job, readFileSync(job, 'utf8').replace('output:\n  dir: ./out\n', ''));
      return job;
    }

    it('renders into the bucket with checksums, and a re-run skips what is there', async () => {
      const dir = tempDir();
      const job = writeJob(dir, {
        name: 'bucketed',
        baseUrls: sim.urls,
        items: [
          { id: 'a', prompt: 's3 a' },
          { id: 'b', prompt: 's3 b' },
        ],
        extra: s3Block(s3, 'renders'),
      });
      // writeJob puts a local output block first; the S3 block above overrides it, so drop the local one.
      const { readFileSync, writeFileSync } = await import('node:fs');
      writeFileSync(job, readFileSync(job, 'utf8').replace('output:\n  dir: ./out\n', ''));

      const result = await runCli(['run', job], { env });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /2 of 2 succeeded.*s3:\/\/renders\/bucketed\//);
      const listed = await client.send(new ListObjectsV2Command({ Bucket: 'renders', Prefix: 'bucketed/' }));
      const videos = (listed.Contents ?? [])
        .map((o) => o.Key!)
        .filter((k) => k.endsWith('.mp4'))
        .sort();
      assert.deepEqual(videos, ['bucketed/001-a.mp4', 'bucketed/002-b.mp4']);

      const rows = JSON.parse((await runCli(['results', job, '--format', 'json'], { env })).stdout) as Array<{
        key: string;
        state: string;
        file: string;
        sha256: string;
      }>;
      assert.equal(rows.length, 2);
      const snapshot = await manifestObject('bucketed/');
      assert.deepEqual(
        snapshot?.map((r) => [r.key, r.state, r.file, r.sha256]),
        rows.map((r) => [r.key, r.state, r.file, r.sha256]),
        'manifest.jsonl beside the videos: one line per item, as `results` reports them',
      );
      for (const row of rows) {
        const object = await client.send(new GetObjectCommand({ Bucket: 'renders', Key: `bucketed/${row.file}` }));
        const bytes = Buffer.from(await object.Body!.transformToByteArray());
        assert.equal(createHash('sha256').update(bytes).digest('hex'), row.sha256);
      }

      await client.send(new DeleteObjectCommand({ Bucket: 'renders', Key: 'bucketed/manifest.jsonl' }));
      const before = creates();
      const again = await runCli(['run', job], { env });
      assert.equal(again.code, 0, again.stderr);
      assert.equal(creates(), before, 'objects already in the bucket are not rendered again');
      assert.deepEqual(await manifestObject('bucketed/'), snapshot, 'the next run of the job leaves it again');
      const head = await client.send(new HeadObjectCommand({ Bucket: 'renders', Key: 'bucketed/manifest.jsonl' }));
      assert.equal(head.ContentType, 'application/x-ndjson');
    });

    it('a job stopped early by a job-wide cause (a rejected key) leaves manifest.jsonl too, with no item looking ended', async () => {
      const job = await s3Job({
        name: 'stopped',
        baseUrls: sim.urls,
        items: [1, 2, 3, 4, 5].map((n) => ({ id: `s${n}`, prompt: `stopped ${n}` })),
      });
      const wrongKey = { ...env, GATEWAY_API_KEY: 'sk-wrong-key-000000000000' };
      // run's preflight refuses a key the gateway refuses before anything starts (docs/preflight.md);
      // a fleet worker holding such a key meets it at its first create and stops the job there.
      const refused = await runCli(['run', job], { env: wrongKey });
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /the gateway refused the key in GATEWAY_API_KEY/);
      const { GATEWAY_API_KEY: _key, ...submitter } = env;
      const worker = startCli(['worker'], { env: wrongKey });
      let result: Awaited<ReturnType<typeof runCli>>;
      try {
        await worker.waitFor(/polling task queue/, 60_000);
        result = await runCli(['run', job, '--no-worker'], { env: submitter });
      } finally {
        worker.child.kill('SIGTERM');
        await worker.done;
      }
      // Exit 2 naming the key; the refused creates created nothing, so no item has a row: a plain run
      // after the fix renders them all (docs/reruns.md).
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stdout + result.stderr, /stopped: .*GATEWAY_API_KEY/);
      const rows = await manifestObject('stopped/');
      assert.ok(rows, 'manifest.jsonl is there');
      assert.deepEqual(
        rows.map((r) => [r.key, r.state, r.error?.kind]),
        [],
      );
      const results = JSON.parse((await runCli(['results', job, '--format', 'json'], { env })).stdout) as Array<{ key: string }>;
      assert.deepEqual(
        rows.map((r) => r.key),
        results.map((r) => r.key),
      );
    });

    it('a prefix belongs to one job: the owner marker is left there, and another job is refused, exit 2 (docs/reruns.md)', async () => {
      const { readFileSync, writeFileSync } = await import('node:fs');
      const sharedPrefix = (job: string) => {
        writeFileSync(job, readFileSync(job, 'utf8').replace('prefix: "{job}/"', 'prefix: "shared/"'));
        return job;
      };
      const owner = sharedPrefix(await s3Job({ name: 's3-owner', baseUrls: sim.urls, items: [{ id: 'o', prompt: 's3 owned' }] }));
      assert.equal((await runCli(['run', owner], { env })).code, 0);
      const marker = await client.send(new GetObjectCommand({ Bucket: 'renders', Key: 'shared/.reelflow/owner.json' }));
      assert.deepEqual(JSON.parse(await marker.Body!.transformToString('utf8')), { job: 's3-owner', workflowId: 'reelflow-s3-owner' });
      const other = sharedPrefix(await s3Job({ name: 's3-other', baseUrls: sim.urls, items: [{ id: 'o', prompt: 's3 intruder' }] }));
      const refused = await runCli(['run', other], { env });
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(
        refused.stderr,
        /s3:\/\/renders\/shared\/ belongs to job "s3-owner" \(workflow reelflow-s3-owner\); job "s3-other" may not write there/,
      );
      assert.equal(sim.stats().createsByPrompt['s3 intruder'], undefined);
    });

    for (const [label, mutate, pattern] of [
      ['a bucket that does not exist', (d: string) => d.replace('bucket: renders', 'bucket: no-such-bucket'), /no-such-bucket/],
      ['wrong credentials', undefined, /credential|access key|signature|denied/i],
      [
        'an unreachable endpoint',
        (d: string) => d.replace(/endpoint: http:\/\/127\.0\.0\.1:\d+/, 'endpoint: http://127.0.0.1:1'),
        /127\.0\.0\.1:1/,
      ],
    ] as const) {
      it(`${label}: run stops before creating anything, exit 3, with a clear message`, async () => {
        const dir = tempDir();
        const { readFileSync, writeFileSync } = await import('node:fs');
        const job = writeJob(dir, {
          name: 'badbucket',
          baseUrls: sim.urls,
          items: [{ id: 'x', prompt: `bad bucket ${label}` }],
          extra: s3Block(s3, 'renders'),
        });
        let text = readFileSync(job, 'utf8').replace('output:\n  dir: ./out\n', '');
        if (mutate) text = mutate(text);
        writeFileSync(job, text);
        const badEnv = label === 'wrong credentials' ? { ...env, AWS_SECRET_ACCESS_KEY: 'wrong-secret-0000000000' } : env;
        const before = creates();
        const result = await runCli(['run', job], { env: badEnv });
        assert.equal(result.code, 3, result.stderr);
        assert.match(result.stderr, pattern);
        assert.ok(!result.stderr.includes(s3.secretAccessKey), 'the secret is never printed');
        assert.equal(creates(), before, 'nothing was created');
        const doctor = await runCli(['doctor', job], { env: badEnv });
        assert.notEqual(doctor.code, 0);
        assert.match(doctor.stdout + doctor.stderr, pattern);
      });
    }
  });
}
