// `reelflow schedule …` as a user runs it: the built command against a real Temporal development
// server; a triggered run is executed by a real `reelflow worker` against the simulator, which
// publishes a price for one model at new-api's /api/pricing.
// Build first: bash scripts/build.sh
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { isKeyOf } from '../../activities/key-fingerprint';
import { startSimulator, type SimHandle } from '../../sim';
import { runCli, startCli } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

const KEY = `sk-schedule-${randomBytes(12).toString('hex')}`;
const NAME = 'nightly-e2e';
const ID = `reelflow-${NAME}`;
/** Priced by the gateway alone (the simulator's /api/pricing): $0.50 a video. */
const GATEWAY_PRICED = 'kling-v2-1';

function writeScheduledJob(dir: string, baseUrl: string, schedule: string | undefined, name = NAME): string {
  const text = [
    'version: 1',
    `name: ${name}`,
    'gateway:',
    `  base_urls: [${baseUrl}]`,
    'defaults:',
    '  model: seedance-1-0-pro-250528',
    '  seconds: "5"',
    'polling:',
    '  initial: 500ms',
    '  max: 1s',
    '  timeout: 2m',
    'output:',
    '  dir: ./out/{date}',
    ...(schedule ? ['schedule:', ...schedule.split('\n').map((l) => `  ${l}`)] : []),
    'items:',
    '  - prompt: a quiet harbour at dawn',
    '  - prompt: a paper boat in the rain',
    '',
  ].join('\n');
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, text);
  return path;
}

interface ListRow {
  name: string;
  scheduleId: string;
  cron: string | null;
  timezone: string;
  overlap: string;
  paused: boolean;
  nextRun: string | null;
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe('reelflow schedule', { timeout: 240_000 }, () => {
  let temporal: TestTemporal;
  let sim: SimHandle;
  let client: Client;
  let env: NodeJS.ProcessEnv;
  let dir: string;
  let job: string;

  before(async () => {
    temporal = await startTestTemporal();
    sim = await startSimulator({ keys: [KEY], renderMs: 300, videoBytes: 64 * 1024, publishedPrices: { [GATEWAY_PRICED]: 0.5 } });
    client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
    env = { ...temporal.env, GATEWAY_API_KEY: KEY };
    dir = tempDir('reelflow-schedule-');
    job = writeScheduledJob(dir, sim.urls[0]!, 'cron: "0 3 * * *"\ntimezone: UTC\noverlap: skip');
  });
  after(async () => {
    await client?.connection.close();
    await sim?.close();
    await temporal?.stop();
  });

  const listed = async (): Promise<ListRow | undefined> => {
    const result = await runCli(['schedule', 'list', '--json'], { env });
    assert.equal(result.code, 0, result.stderr);
    return (JSON.parse(result.stdout) as ListRow[]).find((r) => r.name === NAME);
  };

  it('apply creates the schedule from the schedule: block', async () => {
    const result = await runCli(['schedule', 'apply', job], { env });
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.match(result.stdout, new RegExp(`^created schedule ${ID}`, 'm'));
    assert.match(result.stdout, /runs need a worker: keep `reelflow worker` running/);
    const d = await client.schedule.getHandle(ID).describe();
    assert.equal(d.spec.timezone, 'UTC');
    assert.equal(d.policies.overlap, 'SKIP');
    assert.equal(d.action.workflowType, 'JobWorkflow');
    assert.equal(d.action.taskQueue, 'reelflow');
    assert.equal(d.action.workflowId, ID);
    // No runDate; the fingerprint of the submitter's key (docs/keys.md), never the key.
    const [args] = d.action.args as Array<{ jobFile: string; keyFingerprint?: string }>;
    assert.deepEqual(Object.keys(args ?? {}).sort(), ['jobFile', 'keyFingerprint'], 'a scheduled run carries no runDate');
    assert.equal(args?.jobFile, job);
    const fingerprinted = { workflowId: ID, jobFile: job, apiKeyEnv: 'GATEWAY_API_KEY', baseUrls: [sim.urls[0]!] };
    assert.ok(
      args?.keyFingerprint && isKeyOf(args.keyFingerprint, KEY, fingerprinted),
      'the fingerprint is of the submitter key, for this job',
    );
    assert.ok(!JSON.stringify(d.action.args).includes(KEY));
    assert.equal(d.state.paused, false);
    assert.equal(d.info.nextActionTimes[0]?.getUTCHours(), 3);
  });

  it('apply again updates the same schedule (no duplicate) with the changed cron', async () => {
    writeScheduledJob(dir, sim.urls[0]!, 'cron: "*/30 * * * *"\ntimezone: UTC\noverlap: buffer_one');
    const result = await runCli(['schedule', 'apply', job], { env });
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.match(
      result.stdout,
      new RegExp(`^updated schedule ${ID} \\(cron "0 3 \\* \\* \\*" -> "\\*/30 \\* \\* \\* \\*", overlap skip -> buffer_one\\)`, 'm'),
    );
    const d = await client.schedule.getHandle(ID).describe();
    assert.equal(d.policies.overlap, 'BUFFER_ONE');
    const next = d.info.nextActionTimes[0]!;
    assert.ok([0, 30].includes(next.getUTCMinutes()), `next run ${next.toISOString()}`);
    assert.ok(next.getTime() - Date.now() <= 30 * 60_000 + 5_000);
    const ids: string[] = [];
    for await (const s of client.schedule.list()) if (s.scheduleId === ID) ids.push(s.scheduleId);
    assert.ok(ids.length <= 1, `one schedule, got ${ids.length}`);
  });

  it('list shows it with cron, time zone, paused and next run', async () => {
    const row = await eventually('the schedule in `schedule list`', listed);
    assert.equal(row.scheduleId, ID);
    assert.equal(row.cron, '*/30 * * * *');
    assert.equal(row.timezone, 'UTC');
    assert.equal(row.overlap, 'buffer_one');
    assert.equal(row.paused, false);
    assert.ok(row.nextRun && !Number.isNaN(Date.parse(row.nextRun)));
    const table = await runCli(['schedule', 'list'], { env });
    assert.equal(table.code, 0);
    assert.match(table.stdout, /^NAME\s+CRON\s+TZ\s+PAUSED\s+NEXT RUN\s+RECENT RUNS$/m);
    assert.match(table.stdout, new RegExp(`^${NAME}\\s+\\*/30 \\* \\* \\* \\*\\s+UTC\\s+no\\s+`, 'm'));
  });

  it('pause and unpause are reflected (by job name and by schedule id)', async () => {
    const paused = await runCli(['schedule', 'pause', NAME], { env });
    assert.equal(paused.code, 0, paused.stderr);
    assert.match(paused.stdout, new RegExp(`^paused schedule ${ID}`, 'm'));
    assert.equal((await client.schedule.getHandle(ID).describe()).state.paused, true);
    assert.equal((await listed())?.paused, true);

    const unpaused = await runCli(['schedule', 'unpause', ID], { env });
    assert.equal(unpaused.code, 0, unpaused.stderr);
    assert.match(unpaused.stdout, new RegExp(`^unpaused schedule ${ID}: next run `, 'm'));
    assert.equal((await client.schedule.getHandle(ID).describe()).state.paused, false);
  });

  it('trigger starts a JobWorkflow run that a worker renders under its own dated directory', async () => {
    const worker = startCli(['worker'], { env });
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      const result = await runCli(['schedule', 'trigger', NAME], { env });
      assert.equal(result.code, 0, result.stderr + result.stdout);
      assert.match(result.stdout, new RegExp(`^triggered schedule ${ID}: started run ${ID}-`, 'm'));

      const run = await eventually('a JobWorkflow started by the schedule', async () => {
        for await (const w of client.workflow.list({ query: "WorkflowType = 'JobWorkflow'" })) {
          if (w.workflowId.startsWith(`${ID}-`)) return w;
        }
        return undefined;
      });
      await client.workflow.getHandle(run.workflowId, run.runId).result();
      const described = await client.workflow.getHandle(run.workflowId, run.runId).describe();
      // The run dates its outputs from its own start time in the schedule's zone (UTC here).
      const dated = join(dir, 'out', described.startTime.toISOString().slice(0, 10));
      assert.ok(existsSync(join(dated, 'manifest.jsonl')), `manifest under ${dated}`);
      const videos = readdirSync(dated).filter((f) => f.endsWith('.mp4'));
      assert.equal(videos.length, 2, `videos under ${dated}: ${readdirSync(dated).join(', ')}`);
      // The job file names the newest run, scheduled or not: status and results find its dated outputs.
      const results = await runCli(['results', job, '--format', 'json'], { env });
      assert.equal(results.code, 0, results.stderr);
      const rows = JSON.parse(results.stdout) as Array<{ state: string; file: string }>;
      assert.deepEqual(
        rows.map((r) => r.state),
        ['succeeded', 'succeeded'],
      );
      assert.deepEqual(rows.map((r) => r.file).sort(), videos.sort());
      const status = await runCli(['status', job, '--json'], { env });
      assert.equal(status.code, 0, status.stderr);
      assert.equal((JSON.parse(status.stdout) as { counts: { succeeded: number } }).counts.succeeded, 2);
      assert.ok(!worker.child.killed);
    } finally {
      worker.child.kill('SIGINT');
      const ended = await worker.done;
      assert.ok(!ended.stdout.includes(KEY) && !ended.stderr.includes(KEY), 'the key must never be printed');
    }
  });

  it("a scheduled run prices with the gateway's published prices: its budget allows 2 of 3 items, and says where each price came from", async () => {
    const name = 'nightly-priced';
    const prompts = ['priced harbour', 'priced boat', 'priced lantern'];
    const jobFile = writeJob(dir, {
      name,
      baseUrls: [sim.urls[0]!],
      model: GATEWAY_PRICED,
      maxInFlight: 3,
      polling: 'polling:\n  initial: 500ms\n  max: 1s\n  timeout: 2m',
      outputDir: './out-priced/{date}',
      extra: 'budget:\n  max_usd: 1\nschedule:\n  cron: "0 3 * * *"\n  timezone: UTC',
      items: prompts.map((prompt) => ({ prompt })),
    });
    const applied = await runCli(['schedule', 'apply', jobFile], { env });
    assert.equal(applied.code, 0, applied.stderr + applied.stdout);
    const worker = startCli(['worker'], { env });
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      const triggered = await runCli(['schedule', 'trigger', name], { env });
      assert.equal(triggered.code, 0, triggered.stderr + triggered.stdout);
      const run = await eventually('the scheduled run', async () => {
        for await (const w of client.workflow.list({ query: "WorkflowType = 'JobWorkflow'" })) {
          if (w.workflowId.startsWith(`reelflow-${name}-`)) return w;
        }
        return undefined;
      });
      const result = (await client.workflow.getHandle(run.workflowId, run.runId).result()) as {
        stoppedBy?: { kind: string };
        counts: { succeeded: number };
      };
      assert.equal(result.stoppedBy?.kind, 'budget_reached', JSON.stringify(result));
      const creates = prompts.reduce((n, p) => n + (sim.stats().createsByPrompt[p] ?? 0), 0);
      assert.equal(creates, 2, 'the third item would cross the budget: never created');
      const described = await client.workflow.getHandle(run.workflowId, run.runId).describe();
      const manifest = join(dir, 'out-priced', described.startTime.toISOString().slice(0, 10), 'manifest.jsonl');
      const rows = readFileSync(manifest, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { state: string; cost_usd?: number; cost_source?: string });
      assert.deepEqual(
        rows.map((r) => [r.state, r.cost_usd, r.cost_source]),
        [
          ['succeeded', 0.5, 'estimated'],
          ['succeeded', 0.5, 'estimated'],
        ],
      );
      // status of the run by its job file: spent beside the estimate with the gateway's prices.
      const status = await runCli(['status', jobFile, '--json'], { env });
      assert.equal(status.code, 0, status.stderr);
      const { spend } = JSON.parse(status.stdout) as { spend: { spent_usd: number; estimate_usd: number } | null };
      assert.deepEqual([spend?.spent_usd, spend?.estimate_usd], [1, 1.5], status.stdout);
      // The run says where each price came from: its job.started line in the worker's log (docs/logs.md).
      const started = readFileSync(join(temporal.stateDir, 'logs', 'reelflow.log'), 'utf8')
        .split('\n')
        .filter((line) => line.includes('"job.started"'))
        .map((line) => JSON.parse(line) as { jobId: string; prices?: Record<string, string> })
        .find((line) => line.jobId === run.workflowId);
      assert.deepEqual(started?.prices, { [GATEWAY_PRICED]: `gateway ${sim.urls[0]} (/api/pricing)` });
    } finally {
      worker.child.kill('SIGINT');
      await worker.done;
      await runCli(['schedule', 'delete', name], { env });
    }
  });

  it('delete removes it', async () => {
    const result = await runCli(['schedule', 'delete', NAME], { env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`^deleted schedule ${ID}`, 'm'));
    await assert.rejects(client.schedule.getHandle(ID).describe(), ScheduleNotFoundError);
    const again = await runCli(['schedule', 'pause', NAME], { env });
    assert.equal(again.code, 2);
    assert.match(again.stderr, new RegExp(`no schedule named ${NAME}`));
  });

  it('an unknown name exits 2', async () => {
    for (const verb of ['trigger', 'delete', 'pause', 'unpause']) {
      const result = await runCli(['schedule', verb, 'no-such-job'], { env });
      assert.equal(result.code, 2, `${verb}: ${result.stderr}`);
      assert.match(result.stderr, /no schedule named no-such-job/);
    }
  });

  it('a job file without a schedule: block exits 2', async () => {
    const plain = writeScheduledJob(dir, sim.urls[0]!, undefined, 'unscheduled');
    const result = await runCli(['schedule', 'apply', plain], { env });
    assert.equal(result.code, 2, result.stderr + result.stdout);
    assert.match(result.stderr, /has no schedule: block/);
    await assert.rejects(client.schedule.getHandle('reelflow-unscheduled').describe(), ScheduleNotFoundError);
  });
});
