// Two machines on one host: a submitter starts a job whose outputs go to S3 (MinIO), then its
// job directory (job file, items_from CSV, reference images) is removed. Two workers, started from
// other, empty working directories with their own homes and only Temporal's address, the gateway
// key and S3 credentials in their environment, finish it from the job's stored inputs
// (storage/inputs/refs.ts); one of them is killed with SIGKILL mid-run. Real parts throughout: a
// Temporal dev server, the simulator behind a recording proxy, MinIO, the built command.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { Client, Connection } from '@temporalio/client';
import { startSimulator, type SimHandleExt } from '../../sim';
import type { JobResult } from '../../workflows/types';
import { runCli, startCli, type CliRun } from '../support/cli';
import { tempDir } from '../support/jobs';
import { recordingProxy, type RecordingProxy } from '../support/recording-proxy';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { startTestTemporal, type TestTemporal } from '../support/temporal';
import { until } from '../support/wait';

const KEY = 'sk-test-fleet-0123456789abcdef';
const BUCKET = 'fleet';
const JOB = 'fleet-job';
const ITEMS = 8;

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** What reached the gateway: the reference bytes of each create, by prompt. */
type Received = Map<string, string[][]>;

function record(req: IncomingMessage, body: Buffer, received: Received): void {
  let prompt: string | undefined;
  const refs: string[] = [];
  if (req.url === '/v1/video/generations') {
    const json = JSON.parse(body.toString('utf8')) as { prompt: string; metadata?: { content?: Array<{ image_url?: { url: string } }> } };
    prompt = json.prompt;
    for (const item of json.metadata?.content ?? []) {
      const match = /^data:[^;]+;base64,(.*)$/s.exec(item.image_url?.url ?? '');
      if (match) refs.push(sha(Buffer.from(match[1]!, 'base64')));
    }
  } else if (req.url === '/v1/videos') {
    const boundary = /boundary=([^;]+)/.exec(req.headers['content-type'] ?? '')?.[1];
    if (!boundary) return;
    for (const part of splitBuffer(body, Buffer.from(`--${boundary}`))) {
      const headEnd = part.indexOf('\r\n\r\n');
      if (headEnd < 0) continue;
      const head = part.subarray(0, headEnd).toString('utf8');
      const content = part.subarray(headEnd + 4, part.length - 2); // the part ends with \r\n
      if (/name="prompt"/.test(head)) prompt = content.toString('utf8');
      if (/name="input_reference"/.test(head)) refs.push(sha(content));
    }
  }
  if (prompt !== undefined) received.set(prompt, [...(received.get(prompt) ?? []), refs]);
}

function splitBuffer(buffer: Buffer, separator: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = buffer.indexOf(separator); at >= 0; at = buffer.indexOf(separator, from)) {
    if (at > from) parts.push(buffer.subarray(from, at));
    from = at + separator.length;
  }
  return parts;
}

/** A PNG-looking image with random content, different per name. */
function image(seed: string): Buffer {
  const header = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([header, createHash('sha512').update(seed).digest(), Buffer.alloc(20_000, seed.length)]);
}

describe('a fleet: workers that share nothing with the submitter but Temporal and the bucket', () => {
  let temporal: TestTemporal;
  let sim: SimHandleExt;
  let s3: S3TestServer;
  let proxy: RecordingProxy;
  let s3Client: S3Client;
  const received: Received = new Map();
  const workers: CliRun[] = [];
  const scratch: string[] = [];

  before(async () => {
    [temporal, sim, s3] = await Promise.all([
      startTestTemporal(),
      startSimulator({ ports: [0], keys: [KEY], renderMs: [4000, 6000], seed: 17 }),
      startS3Server(),
    ]);
    await s3.createBucket(BUCKET);
    // The reference bytes of every create: `data:` URLs (general), the `input_reference` file (openai).
    proxy = await recordingProxy(sim.urls[0]!, (req, body) => {
      if (req.method === 'POST') record(req, body, received);
    });
    s3Client = s3.client();
  });
  after(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.done));
    s3Client?.destroy();
    await proxy?.close();
    await Promise.all([sim?.close(), s3?.stop(), temporal?.stop()]);
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });

  /** A machine: its own empty home and working directory, and only these variables. */
  function machine(name: string, extra: NodeJS.ProcessEnv = {}): { cwd: string; env: NodeJS.ProcessEnv } {
    const root = tempDir(`reelflow-fleet-${name}-`);
    scratch.push(root);
    mkdirSync(join(root, 'home'));
    mkdirSync(join(root, 'work'));
    return {
      cwd: join(root, 'work'),
      env: {
        PATH: process.env.PATH,
        HOME: join(root, 'home'),
        TEMPORAL_ADDRESS: temporal.address,
        AWS_ACCESS_KEY_ID: s3.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
        ...extra,
      },
    };
  }

  it('the submitter removes its job directory; two workers finish the job, one of them killed mid-run', async () => {
    // The submitter's job: items from a CSV, a local reference image per row (one shared by two
    // rows), one row on the openai protocol (a multipart upload), outputs in the bucket.
    const submitter = machine('submitter');
    const jobDir = join(submitter.cwd, 'campaign');
    mkdirSync(join(jobDir, 'assets'), { recursive: true });
    const images = new Map<string, Buffer>();
    const rows = ['id,prompt,image,model'];
    for (let i = 1; i <= ITEMS; i++) {
      const name = i === ITEMS ? 'img-1.png' : `img-${i}.png`;
      if (!images.has(name)) images.set(name, image(name));
      rows.push(`row-${i},fleet prompt ${i},assets/${name},${i === 2 ? 'veo-3.1-fast-generate-001' : ''}`);
    }
    for (const [name, bytes] of images) writeFileSync(join(jobDir, 'assets', name), bytes);
    writeFileSync(join(jobDir, 'rows.csv'), `${rows.join('\n')}\n`);
    const jobFile = join(jobDir, 'job.yaml');
    writeFileSync(
      jobFile,
      [
        'version: 1',
        `name: ${JOB}`,
        'gateway:',
        `  base_urls: [${proxy.url}]`,
        'defaults:',
        '  model: seedance-1-0-pro-250528',
        '  seconds: "5"',
        'models:',
        '  veo-3.1-fast-generate-001:',
        '    protocol: openai',
        '    seconds: "4"',
        '    assets: [image]',
        'concurrency:',
        '  max_in_flight: 3',
        'polling:',
        '  initial: 500ms',
        '  max: 2s',
        '  timeout: 5m',
        'items_from:',
        '  file: rows.csv',
        'output:',
        '  storage: s3',
        '  s3:',
        `    bucket: ${BUCKET}`,
        '    prefix: "{job}/"',
        `    region: ${s3.region}`,
        `    endpoint: ${s3.endpoint}`,
        '    force_path_style: true',
        '',
      ].join('\n'),
    );

    const started = await runCli(['run', 'campaign/job.yaml', '--detach', '--no-worker'], submitter);
    assert.equal(started.code, 0, started.stderr);
    assert.match(
      started.stderr,
      new RegExp(`inputs: ${2 + images.size} file\\(s\\) stored for the workers at s3://${BUCKET}/${JOB}/\\.reelflow/inputs/`),
    );
    const stored = await s3Client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${JOB}/.reelflow/inputs/sha256/` }));
    assert.equal(stored.KeyCount, 2 + images.size + 1, 'job file, CSV, each image once, and the index');

    // An edit while the job runs: the running job is immune, and the submitter says so.
    writeFileSync(join(jobDir, 'rows.csv'), `${rows.join('\n').replace('fleet prompt 1,', 'EDITED prompt 1,')}\n`);
    const status = await runCli(['status', 'campaign/job.yaml'], submitter);
    assert.match(
      status.stderr,
      /campaign\/job\.yaml changed since job reelflow-fleet-job started \(.*rows\.csv\): the running job goes on/,
    );
    assert.match(status.stderr, /reelflow cancel reelflow-fleet-job/);
    const attached = await runCli(['run', 'campaign/job.yaml', '--detach', '--no-worker'], submitter);
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stderr, /already running: attached/);
    assert.match(attached.stderr, /changed since job reelflow-fleet-job started/);

    rmSync(jobDir, { recursive: true });

    const workerEnv = { GATEWAY_API_KEY: KEY };
    const [a, b] = [machine('worker-a', workerEnv), machine('worker-b', workerEnv)];
    for (const m of [a, b]) assert.deepEqual(readdirSync(m.cwd), [], 'an empty working directory');
    // The submitter holds no key: the fleet's users opted in to carrying its keyless job (docs/keys.md).
    const workerA = startCli(['worker', '--accept-keyless-jobs'], a);
    workers.push(workerA);
    await workerA.waitFor(/polling task queue/, 60_000);
    const workerB = startCli(['worker', '--accept-keyless-jobs'], b);
    workers.push(workerB);
    await workerB.waitFor(/polling task queue/, 60_000);

    // Kill A once a window's worth of renders is under way and every create made so far has been
    // answered (its task is polled): a create cut mid-flight would rightly end `unknown`.
    const creates = () => Object.values(sim.stats().createsByPrompt).reduce((x, y) => x + y, 0);
    const polled = () => Object.keys(sim.stats().pollsByTask).length;
    await until(() => creates() >= 3 && polled() === creates(), 120_000, 'three renders under way');
    workerA.child.kill('SIGKILL');
    const killed = await workerA.done;
    assert.equal(killed.signal, 'SIGKILL');

    const connection = await Connection.connect({ address: temporal.address });
    let result: JobResult;
    try {
      result = await new Client({ connection }).workflow.getHandle(`reelflow-${JOB}`).result();
    } finally {
      await connection.close();
    }
    assert.equal(result.counts.succeeded, ITEMS, JSON.stringify(result));
    workerB.child.kill('SIGTERM');
    assert.equal((await workerB.done).code, 0);

    // One create per item, for the prompts that were submitted (the edit never ran).
    const byPrompt = sim.stats().createsByPrompt;
    for (let i = 1; i <= ITEMS; i++) assert.equal(byPrompt[`fleet prompt ${i}`], 1, `creates of item ${i}: ${JSON.stringify(byPrompt)}`);
    assert.ok(!Object.keys(byPrompt).some((p) => p.startsWith('EDITED')), 'the edited CSV is not what runs');

    // Every reference reached the gateway byte for byte.
    for (let i = 1; i <= ITEMS; i++) {
      const expected = sha(images.get(i === ITEMS ? 'img-1.png' : `img-${i}.png`)!);
      const sent = received.get(`fleet prompt ${i}`) ?? [];
      assert.ok(sent.length >= 1, `item ${i} reached the gateway`);
      for (const refs of sent) assert.deepEqual(refs, [expected], `item ${i}'s reference`);
    }

    // Every video in the bucket is what the simulator served for its task.
    const manifest = await s3Client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${JOB}/manifest/` }));
    const latest = new Map<string, { state: string; file: string; sha256: string; task_id: string }>();
    for (const object of manifest.Contents ?? []) {
      const got = await s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: object.Key! }));
      const row = JSON.parse(await got.Body!.transformToString()) as {
        key: string;
        state: string;
        file: string;
        sha256: string;
        task_id: string;
      };
      latest.set(row.key, row);
    }
    assert.equal(latest.size, ITEMS);
    for (const row of latest.values()) {
      assert.equal(row.state, 'succeeded');
      const object = await s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${JOB}/${row.file}` }));
      const inBucket = sha(Buffer.from(await object.Body!.transformToByteArray()));
      const served = await fetch(`${sim.urls[0]}/v1/videos/${encodeURIComponent(row.task_id)}/content`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      assert.equal(served.status, 200);
      assert.equal(inBucket, sha(Buffer.from(await served.arrayBuffer())), `${row.file} is what the simulator served`);
      assert.equal(row.sha256, inBucket);
    }

    // The workers cached what they fetched, verified, under their own homes.
    const cached = [a, b].flatMap((m) => {
      try {
        return readdirSync(join(m.env.HOME!, '.cache', 'reelflow', 'inputs', 'sha256'));
      } catch {
        return [];
      }
    });
    assert.equal(new Set(cached).size, 2 + images.size, `cached inputs: ${cached.join(', ')}`);

    // Any machine that reaches Temporal and the bucket sees the ended job in full, by its id, from
    // the workflow's own input and the stored inputs: never from the submitter's (removed) path.
    const onlooker = machine('onlooker');
    for (const target of [JOB, `reelflow-${JOB}`]) {
      const shown = await runCli(['status', target], onlooker);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, new RegExp(`${JOB}: ${ITEMS} of ${ITEMS} succeeded`));
    }
    const statusJson = await runCli(['status', JOB, '--json'], onlooker);
    assert.equal(statusJson.code, 0, statusJson.stderr);
    const statusDoc = JSON.parse(statusJson.stdout) as { job: string; state: string; counts: { succeeded: number }; items: number };
    assert.deepEqual([statusDoc.job, statusDoc.state, statusDoc.counts.succeeded, statusDoc.items], [JOB, 'completed', ITEMS, ITEMS]);
    const results = await runCli(['results', JOB, '--format', 'json'], onlooker);
    assert.equal(results.code, 0, results.stderr);
    const resultRows = JSON.parse(results.stdout) as Array<{ key: string; state: string; prompt: string; sha256: string }>;
    assert.equal(resultRows.length, ITEMS);
    for (const row of resultRows) {
      assert.equal(row.state, 'succeeded');
      assert.equal(row.sha256, latest.get(row.key)?.sha256, `${row.key}: the manifest's row`);
    }
    assert.deepEqual(resultRows.map((r) => r.prompt).sort(), Array.from({ length: ITEMS }, (_, i) => `fleet prompt ${i + 1}`).sort());
    // Cancel of an ended job says so, by id, from anywhere.
    const cancel = await runCli(['cancel', JOB, '--no-wait'], onlooker);
    assert.equal(cancel.code, 0, cancel.stderr);
    assert.match(cancel.stderr, /is not running \(completed\): nothing to cancel/);
  });

  it('schedule apply with REELFLOW_INPUTS naming a shared directory: a run is rendered after the job directory is gone', async () => {
    const shared = tempDir('reelflow-fleet-shared-');
    scratch.push(shared);
    const inputs = join(shared, 'inputs');
    const out = join(shared, 'out');
    const submitter = machine('scheduler', { REELFLOW_INPUTS: inputs });
    const jobDir = join(submitter.cwd, 'nightly');
    mkdirSync(jobDir);
    const images = [image('nightly-a'), image('nightly-b')];
    images.forEach((bytes, i) => writeFileSync(join(jobDir, `ref-${i}.png`), bytes));
    const name = 'fleet-nightly';
    writeFileSync(
      join(jobDir, 'job.yaml'),
      [
        'version: 1',
        `name: ${name}`,
        'gateway:',
        `  base_urls: [${proxy.url}]`,
        'defaults:',
        '  model: seedance-1-0-pro-250528',
        '  seconds: "5"',
        'polling:',
        '  initial: 500ms',
        '  max: 2s',
        '  timeout: 5m',
        'schedule:',
        '  cron: "0 3 * * *"',
        '  timezone: UTC',
        'items:',
        ...images.flatMap((_, i) => [`  - id: n${i}`, `    prompt: nightly prompt ${i}`, '    references:', `      - image: ref-${i}.png`]),
        'output:',
        `  dir: ${out}/{date}`,
        '',
      ].join('\n'),
    );
    const applied = await runCli(['schedule', 'apply', 'nightly/job.yaml'], submitter);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stderr, new RegExp(`inputs: 3 file\\(s\\) stored for the workers at ${inputs}`));
    assert.equal(readdirSync(join(inputs, 'sha256')).length, 4, 'the job file, two images and the index');
    rmSync(jobDir, { recursive: true });

    // Applied without the key: its runs need a worker that opted in to keyless jobs (docs/keys.md).
    const worker = startCli(['worker', '--accept-keyless-jobs'], machine('night-worker', { GATEWAY_API_KEY: KEY }));
    workers.push(worker);
    await worker.waitFor(/polling task queue/, 60_000);
    const trigger = await runCli(['schedule', 'trigger', name], submitter);
    assert.equal(trigger.code, 0, trigger.stderr + trigger.stdout);
    const runId = /started run (\S+);/.exec(trigger.stdout)?.[1];
    assert.ok(runId, trigger.stdout);

    const connection = await Connection.connect({ address: temporal.address });
    try {
      const result = await new Client({ connection }).workflow.getHandle<() => Promise<JobResult>>(runId).result();
      assert.equal(result.counts.succeeded, 2, JSON.stringify(result));
    } finally {
      await connection.close();
    }
    for (const i of [0, 1]) assert.deepEqual(received.get(`nightly prompt ${i}`), [[sha(images[i]!)]], `reference ${i} intact`);
    const [dated] = readdirSync(out);
    assert.equal(readdirSync(join(out, dated!)).filter((f) => f.endsWith('.mp4')).length, 2);

    // From a third machine with an empty directory (the job directory is gone): the run's full
    // outcome by its id, and its report beside its outputs.
    const onlooker = machine('night-onlooker');
    const shown = await runCli(['status', runId], onlooker);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`${name}: 2 of 2 succeeded`));
    const results = await runCli(['results', runId, '--format', 'json'], onlooker);
    assert.equal(results.code, 0, results.stderr);
    const rows = JSON.parse(results.stdout) as Array<{ state: string; prompt: string; file: string }>;
    assert.deepEqual(rows.map((r) => [r.state, r.prompt]).sort(), [
      ['succeeded', 'nightly prompt 0'],
      ['succeeded', 'nightly prompt 1'],
    ]);
    const report = await runCli(['report', runId], onlooker);
    assert.equal(report.code, 0, report.stderr);
    assert.equal(report.stdout.trim(), join(out, dated!, 'report.html'));
    const html = readFileSync(join(out, dated!, 'report.html'), 'utf8');
    for (const row of rows) assert.ok(html.includes(row.file), `the report shows ${row.file}`);
    worker.child.kill('SIGTERM');
    assert.equal((await worker.done).code, 0);
    assert.equal((await runCli(['schedule', 'delete', name], submitter)).code, 0);
  });
});
