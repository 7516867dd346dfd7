// A job with an `assemble:` entry against the simulator, on a real Temporal server, with the CLI as
// a user runs it: the film is stored, its record's sha256, size and duration are the stored file's
// (ffprobe), a second run does not make it again, and a run that renders one of its clips again
// (its prompt edited) makes it again. The worker runs in this process (real activities) so that the
// job's history can be replayed at the end.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from '../../activities/definitions';
import { closeActivityResources } from '../../activities/context';
import { acceptKeylessJobsInThisWorker } from '../../activities/job-key-check';
import { TASK_QUEUE } from '../../client/task-queue';
import type { AssemblySpec } from '../../jobfile/chains';
import type { ManifestRow } from '../../storage/manifest';
import { workflowSource } from '../../worker/bundle';
import { connectClient } from '../../worker/temporal';
import { jobWorkflowId } from '../../workflows/ids';
import type { JobResult } from '../../workflows/types';
import { runCli } from '../support/cli';
import { probeFilm } from '../support/clips';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';

acceptKeylessJobsInThisWorker(true);

const KEY = 'sk-test-films-7d1e0c55';
const ASSEMBLY: AssemblySpec = { name: 'trio', keys: ['shot-1', 'shot-2', 'shot-3'] };

describe('a job with assemble:', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [300, 600], seed: 21, distinctVideos: true });
  let client: Client | undefined;
  after(async () => {
    await client?.connection.close();
    await closeActivityResources();
  });

  it('stores its film once, and makes it again only when a clip changed', { timeout: 300_000 }, async () => {
    const dir = tempDir('reelflow-films-');
    const items = (second: string) => [
      { id: 'shot-1', prompt: 'a lighthouse at dusk' },
      { id: 'shot-2', prompt: second },
      { id: 'shot-3', prompt: 'the beam sweeps the sea' },
    ];
    const assemble = `assemble:\n  - name: ${ASSEMBLY.name}\n    items: [${ASSEMBLY.keys.join(', ')}]`;
    const spec = { name: 'films', baseUrls: e2e.sim.urls, items: items('the keeper climbs the stairs'), extra: assemble };
    const job = writeJob(dir, spec);
    process.env.GATEWAY_API_KEY = KEY;
    const connection = await NativeConnection.connect({ address: e2e.temporal.address });
    const worker = await Worker.create({
      connection,
      namespace: 'default',
      taskQueue: TASK_QUEUE,
      ...workflowSource(),
      activities,
      shutdownGraceTime: '1s',
    });
    const running = worker.run();
    client = await connectClient({
      address: e2e.temporal.address,
      namespace: 'default',
      connectionOptions: { address: e2e.temporal.address },
      description: 'test',
    });
    const runJob = async (): Promise<JobResult> => {
      const started = await runCli(['run', job, '--no-worker', '--detach'], { env: e2e.env });
      assert.equal(started.code, 0, started.stderr);
      return (await client!.workflow.getHandle(jobWorkflowId('films')).result()) as JobResult;
    };
    const out = join(dir, 'out');
    const filmPath = join(out, 'trio.mp4');
    const record = () => JSON.parse(readFileSync(join(out, '.reelflow', 'films', 'trio.json'), 'utf8')) as Record<string, unknown>;
    const rows = () => {
      const latest = new Map<string, ManifestRow>();
      for (const line of readFileSync(join(out, 'manifest.jsonl'), 'utf8').split('\n').filter(Boolean)) {
        const row = JSON.parse(line) as ManifestRow;
        latest.set(row.key, row);
      }
      return latest;
    };
    try {
      const first = await runJob();
      assert.equal(first.counts.succeeded, 3);
      const film = first.films?.[0];
      assert.equal(film?.state, 'made', JSON.stringify(first.films));
      const bytes = readFileSync(filmPath);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const probed = probeFilm(filmPath);
      const made = record();
      assert.equal(made.sha256, sha256);
      assert.equal(made.bytes, bytes.length);
      assert.ok(Math.abs((made.duration_sec as number) - probed.seconds) < 0.001, `${String(made.duration_sec)} vs ${probed.seconds}`);
      // The simulator's clips agree (one size, one rate): cut by stream copy, the sum of the clips.
      assert.equal(made.method, 'stream_copy');
      assert.ok(Math.abs(probed.seconds - 15) < 0.2, `duration ${probed.seconds}`);
      const clipShas = ASSEMBLY.keys.map((k) => rows().get(k)!.sha256);
      assert.deepEqual(
        (made.clips as Array<{ sha256: string }>).map((c) => c.sha256),
        clipShas,
      );

      // results --kept: the film's path on stdout (one path per line), what it is on stderr; JSON: its fields.
      const kept = await runCli(['results', job, '--kept'], { env: e2e.env });
      assert.equal(kept.code, 0, kept.stderr);
      assert.deepEqual(kept.stdout.trim().split('\n'), [filmPath]);
      assert.ok(kept.stderr.includes(`film trio: shot-1 -> shot-2 -> shot-3, 15.0 s, sha256 ${sha256}, ${filmPath}`), kept.stderr);
      const keptJson = await runCli(['results', job, '--kept', '--format', 'json'], { env: e2e.env });
      assert.deepEqual(JSON.parse(keptJson.stdout), [
        { film: 'trio', path: filmPath, clips: ASSEMBLY.keys, duration_sec: made.duration_sec, bytes: bytes.length, sha256 },
      ]);

      // Nothing changed: nothing rendered, the film left as it was.
      const creates = e2e.sim.stats().tasksCreated;
      const second = await runJob();
      assert.equal(e2e.sim.stats().tasksCreated, creates);
      assert.equal(second.films?.[0]?.state, 'unchanged');
      assert.equal(record().made_at, made.made_at);
      assert.equal(createHash('sha256').update(readFileSync(filmPath)).digest('hex'), sha256);

      // Shot 2's prompt edited: it alone is rendered again, and the film is made again from it.
      writeJob(dir, { ...spec, items: items('the keeper opens the lamp room door') });
      const third = await runJob();
      assert.equal(e2e.sim.stats().tasksCreated, creates + 1);
      assert.equal(third.films?.[0]?.state, 'made');
      const remade = record();
      assert.notEqual(remade.sha256, sha256);
      assert.equal(remade.sha256, createHash('sha256').update(readFileSync(filmPath)).digest('hex'));
      assert.notEqual((remade.clips as Array<{ sha256: string }>)[1]!.sha256, clipShas[1]);

      // The job's history with its films replays through the current workflow code.
      const history = await client.workflow.getHandle(jobWorkflowId('films')).fetchHistory();
      assert.ok(history.events!.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'assembleFilm'));
      await Worker.runReplayHistory(workflowSource(), history, jobWorkflowId('films'));
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
    }
  });
});
