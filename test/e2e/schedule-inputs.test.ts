// A schedule's stored inputs live where the schedule lives, not in the day folder of the run that
// `schedule apply` happened to date (docs/deploy.md "Schedules and bucket
// lifecycle rules"): a bucket lifecycle rule that expires old day folders must not break the next
// scheduled run. Real S3 server, real Temporal, the built CLI, workers with empty input caches.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { Client, Connection } from '@temporalio/client';
import { startSimulator, type SimHandle } from '../../sim';
import { parseManifest } from '../../storage/manifest/codec';
import { runCli, startCli } from '../support/cli';
import { tempDir } from '../support/jobs';
import { s3ServerKinds, startS3Server, type S3TestServer } from '../support/s3-server';
import { startTestTemporal, type TestTemporal } from '../support/temporal';
import { within } from '../support/wait';

const KEY = `sk-schedule-inputs-${randomBytes(8).toString('hex')}`;
const NAME = 'nightly-inputs';
const SCHEDULE = `reelflow-${NAME}`;
const BUCKET = 'renders';
const DAY_FOLDER = /^nightly\/\d{4}-\d{2}-\d{2}\//;

describe(`a schedule's stored inputs outlive its day folders (${s3ServerKinds()[0]})`, { timeout: 300_000 }, () => {
  let temporal: TestTemporal;
  let sim: SimHandle;
  let s3: S3TestServer;
  let s3Client: S3Client;
  let client: Client;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    [temporal, sim, s3] = await Promise.all([
      startTestTemporal(),
      startSimulator({ keys: [KEY], renderMs: 300, videoBytes: 32 * 1024 }),
      startS3Server({ kind: s3ServerKinds()[0]! }),
    ]);
    await s3.createBucket(BUCKET);
    env = { ...temporal.env, GATEWAY_API_KEY: KEY, ...s3.env };
    s3Client = s3.client();
    client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
  });
  after(async () => {
    s3Client?.destroy();
    await client?.connection.close();
    await Promise.all([sim?.close(), s3?.stop(), temporal?.stop()]);
  });

  const keys = async (): Promise<string[]> => {
    const listed = await s3Client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'nightly/' }));
    return (listed.Contents ?? []).map((o) => o.Key!);
  };

  /** Triggers the schedule and waits for the run it started to end; its workflow id and result. */
  async function scheduledRun(): Promise<{ workflowId: string; outcome: unknown }> {
    const handle = client.schedule.getHandle(SCHEDULE);
    const before = (await handle.describe()).info.numActionsTaken;
    const worker = startCli(['worker'], { env: { ...env, REELFLOW_INPUTS_CACHE: tempDir('reelflow-inputs-cache-') } });
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      const triggered = await runCli(['schedule', 'trigger', NAME], { env });
      assert.equal(triggered.code, 0, triggered.stderr + triggered.stdout);
      let action;
      for (const deadline = Date.now() + 30_000; !action; await new Promise((r) => setTimeout(r, 300))) {
        const described = await handle.describe();
        if (described.info.numActionsTaken > before) action = described.info.recentActions.at(-1)!.action;
        else assert.ok(Date.now() < deadline, 'the schedule started no run');
      }
      const run = client.workflow.getHandle(action.workflow.workflowId, action.workflow.firstExecutionRunId);
      const outcome = await within(
        run.result().catch((error: Error) => ({ failed: error.message, cause: (error.cause as Error | undefined)?.message })),
        90_000,
        { failed: 'still running after 90 s' },
      );
      return { workflowId: action.workflow.workflowId, outcome };
    } finally {
      worker.child.kill('SIGTERM');
      const ended = await worker.done;
      assert.ok(!ended.stdout.includes(KEY) && !ended.stderr.includes(KEY));
    }
  }

  it('deleting old day folders (as a lifecycle rule would) does not break the next scheduled run', async () => {
    const dir = tempDir('reelflow-schedule-inputs-');
    const job = join(dir, `${NAME}.yaml`);
    writeFileSync(
      job,
      [
        'version: 1',
        `name: ${NAME}`,
        'gateway:',
        `  base_urls: [${sim.urls[0]}]`,
        'defaults:',
        '  model: seedance-1-0-pro-250528',
        '  seconds: "5"',
        'polling:\n  initial: 500ms\n  max: 1s\n  timeout: 2m',
        'output:',
        '  storage: s3',
        '  s3:',
        `    bucket: ${BUCKET}`,
        '    prefix: "nightly/{date}/"',
        `    region: ${s3.region}`,
        `    endpoint: ${s3.endpoint}`,
        '    force_path_style: true',
        'schedule:\n  cron: "0 3 * * *"\n  timezone: UTC\n  overlap: skip',
        'items:',
        '  - prompt: a quiet harbour at dawn',
        '  - prompt: a paper boat in the rain',
        '',
      ].join('\n'),
    );
    const applied = await runCli(['schedule', 'apply', job], { env });
    assert.equal(applied.code, 0, applied.stderr + applied.stdout);
    const stored = await keys();
    assert.ok(stored.length > 0, 'apply stored the inputs');

    const first = await scheduledRun();
    assert.ok(!(first.outcome as { failed?: string } | undefined)?.failed, JSON.stringify(first.outcome));

    // The lifecycle rule: every day folder goes, the schedule's own objects stay.
    const dayObjects = (await keys()).filter((k) => DAY_FOLDER.test(k));
    assert.ok(dayObjects.length >= 3, `the first run wrote its videos and manifest: ${dayObjects.join(', ')}`);
    await s3Client.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: dayObjects.map((Key) => ({ Key })) } }));
    assert.deepEqual(
      (await keys()).filter((k) => DAY_FOLDER.test(k)),
      [],
    );

    // The next run, on a worker that has never seen the job's files, renders everything again.
    const second = await scheduledRun();
    assert.notEqual(second.workflowId, first.workflowId);
    assert.ok(!(second.outcome as { failed?: string } | undefined)?.failed, JSON.stringify(second.outcome));
    const manifestKey = (await keys()).find((k) => DAY_FOLDER.test(k) && k.endsWith('/manifest.jsonl'));
    assert.ok(manifestKey, 'the second run left its manifest in its day folder');
    const got = await s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: manifestKey }));
    const rows = parseManifest(Buffer.from(await got.Body!.transformToByteArray()), { file: manifestKey, firstLine: 1 }).rows;
    assert.deepEqual(
      rows.map((r) => r.state),
      ['succeeded', 'succeeded'],
    );
    // Where they are: beside the schedule's day folders, in its own reserved folder.
    assert.ok(
      stored.every((k) => k.startsWith('nightly/.reelflow/inputs/sha256/')),
      `apply stored its inputs where the schedule lives: ${stored.join(', ')}`,
    );
  });
});
