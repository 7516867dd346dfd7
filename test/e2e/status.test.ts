// status, results and report as a user meets them (docs/commands.md): a job never run is one sentence and
// exit 1 everywhere, --json always prints JSON, a detached job's worker gets a grace, the table of
// jobs shows how each ended (and how many it leaves out), the time counts from the job's start, and
// a command that stops before its job starts leaves no output folder behind.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type SimHandleExt } from '../../sim';
import { runCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';
import {
  endedStatusSchema,
  jobListSchema,
  neverRunSchema,
  resultsSchema,
  runningStatusSchema,
  unansweredStatusSchema,
} from '../../cli/json-outputs';

const KEY = 'sk-test-status-000000000000';
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('status, results and report (issue 25)', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [6000, 7000], seed: 25 });
  // Every render on this one ends failed.
  let failing: SimHandleExt;
  before(async () => {
    failing = await startSimulator({ ports: [0], renderMs: [300, 400], seed: 26, faults: { failRate: 1 }, keys: [KEY] });
  });
  after(async () => {
    await failing?.close();
  });

  it('a job never run: one sentence and exit 1 from status, results and report; --json prints JSON', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'never-run', baseUrls: e2e.sim.urls, items: [{ id: 'n1', prompt: 'never' }] });
    const sentence = new RegExp(`never-run has not been run: start it with reelflow run ${escape(job)}`);
    for (const args of [
      ['status', job],
      ['results', job],
      ['report', job],
    ]) {
      const result = await runCli(args, { env: e2e.env });
      assert.equal(result.code, 1, `${args[0]}: ${result.stderr}`);
      assert.match(result.stderr, sentence, args[0]);
      assert.doesNotMatch(result.stderr, /workflow not found/, args[0]);
    }
    for (const args of [
      ['status', job, '--json'],
      ['results', job, '--format', 'json'],
      ['report', job, '--json'],
    ]) {
      const result = await runCli(args, { env: e2e.env });
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
      neverRunSchema.parse(JSON.parse(result.stdout));
      assert.deepEqual(JSON.parse(result.stdout), {
        job: 'never-run',
        state: 'never_run',
        message: `never-run has not been run: start it with reelflow run ${job}`,
      });
    }
    assert.ok(!existsSync(join(dir, 'out')), 'nothing written for a job never run');
  });

  it('right after run --detach: status --json is JSON and no command says "no worker answers"', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'no-worker-yet', baseUrls: e2e.sim.urls, items: [{ id: 'w1', prompt: 'no worker yet' }] });
    const detached = await runCli(['run', job, '--detach', '--no-worker'], { env: e2e.env });
    assert.equal(detached.code, 0, detached.stderr);
    const json = await runCli(['status', job, '--json'], { env: e2e.env });
    assert.equal(json.code, 0, json.stderr);
    const status = unansweredStatusSchema.parse(JSON.parse(json.stdout));
    assert.deepEqual([status.job, status.state, status.worker], ['no-worker-yet', 'running', 'starting']);
    const human = await runCli(['status', job], { env: e2e.env });
    assert.equal(human.code, 0, human.stderr);
    assert.doesNotMatch(human.stdout + human.stderr, /no worker answers/);
    assert.match(human.stdout, /its worker is starting/);
    const canceled = await runCli(['cancel', job], { env: e2e.env });
    assert.equal(canceled.code, 0, canceled.stderr);
  });

  it('"succeeded in" counts from the job\'s start, not from attaching to it', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'timed', baseUrls: e2e.sim.urls, items: [{ id: 't1', prompt: 'timed one' }] });
    // The background worker of --detach renders; this run attaches 5 s after the start and follows it.
    const detached = await runCli(['run', job, '--detach'], { env: e2e.env });
    const detachedAt = Date.now();
    assert.equal(detached.code, 0, detached.stderr);
    // While it renders, status --json is a running job's document (its worker answers, or is starting).
    const during = await runCli(['status', job, '--json'], { env: e2e.env });
    assert.equal(during.code, 0, during.stderr);
    runningStatusSchema.or(unansweredStatusSchema).parse(JSON.parse(during.stdout));
    await new Promise((r) => setTimeout(r, Math.max(0, 5_000 - (Date.now() - detachedAt))));
    const attached = await runCli(['run', job, '--no-worker'], { env: e2e.env });
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stderr, /already running: attached/);
    const took = Number(/1 of 1 succeeded in ([\d.]+) s/.exec(attached.stdout)?.[1]);
    // The render takes 6-7 s from the job's start; the attach came 5 s after it.
    assert.ok(took >= 6, `succeeded in ${took} s: counted from the attach, not from the job's start\n${attached.stdout}`);
  });

  it('the table of jobs: how each ended, "N of M shown", long ids cut to the width', async () => {
    const dir = tempDir();
    const name = `failing-${'x'.repeat(50)}`; // 58: the longest names are 63
    const job = writeJob(dir, { name, baseUrls: failing.urls, items: [1, 2].map((i) => ({ id: `f${i}`, prompt: `fails ${i}` })) });
    const run = await runCli(['run', job], { env: e2e.env });
    assert.equal(run.code, 1, run.stderr);

    const json = await runCli(['status', '--json', '--limit', '50'], { env: e2e.env });
    assert.equal(json.code, 0, json.stderr);
    const list = JSON.parse(json.stdout) as { jobs: Array<{ id: string; end: string }>; shown: number; total: number };
    const end = (id: string) => list.jobs.find((j) => j.id === id)?.end;
    assert.equal(end('reelflow-no-worker-yet'), 'canceled');
    assert.equal(end('reelflow-timed'), 'completed');
    assert.match(end(`reelflow-${name}`) ?? '', /^(completed: 2 of 2 not succeeded|stopped: .+)$/);
    assert.equal(list.total, list.jobs.length);

    const table = await runCli(['status', '--limit', '2'], { env: { ...e2e.env, COLUMNS: '80' } });
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines.at(-1)!, new RegExp(`^2 of ${list.total} shown \\(--limit ${list.total} for all\\)$`));
    assert.equal(lines.length, 1 + 2 + 1, table.stdout);
    for (const line of lines) assert.ok([...line].length <= 80, `wider than 80 columns: ${line}`);
    assert.match(table.stdout, /reelflow-failing-x+…/);
    assert.doesNotMatch(table.stdout, /\bcompleted\b.*\n.*\bcompleted\b.*\n.*\bcompleted\b/);
  });

  it('an ended job by JSON (checked against the schemas) and results filtered by state, model and id', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'filtered',
      baseUrls: failing.urls,
      items: [1, 2, 3].map((i) => ({ id: `r${i}`, prompt: `filtered prompt ${i}` })),
    });
    const run = await runCli(['run', job], { env: e2e.env });
    assert.equal(run.code, 1, run.stderr);

    const status = await runCli(['status', job, '--json'], { env: e2e.env });
    assert.equal(status.code, 0, status.stderr);
    const ended = endedStatusSchema.parse(JSON.parse(status.stdout));
    assert.equal(ended.items, 3);
    assert.equal(ended.counts.succeeded, 0);
    const list = await runCli(['status', '--json'], { env: e2e.env });
    assert.equal(list.code, 0, list.stderr);
    assert.ok(jobListSchema.parse(JSON.parse(list.stdout)).jobs.some((j) => j.id === 'reelflow-filtered'));

    const all = await runCli(['results', job, '--format', 'json'], { env: e2e.env });
    assert.equal(all.code, 0, all.stderr);
    const rows = resultsSchema.parse(JSON.parse(all.stdout));
    assert.deepEqual(rows.map((r) => r.prompt).sort(), ['filtered prompt 1', 'filtered prompt 2', 'filtered prompt 3']);
    const states = new Set(rows.map((r) => r.state));
    const [state] = states;
    const byState = await runCli(['results', job, '--format', 'json', '--state', `${state},unknown`], { env: e2e.env });
    assert.equal(
      resultsSchema.parse(JSON.parse(byState.stdout)).length,
      rows.filter((r) => r.state === state || r.state === 'unknown').length,
    );
    const none = await runCli(['results', job, '--format', 'json', '--state', 'succeeded'], { env: e2e.env });
    assert.deepEqual(JSON.parse(none.stdout), []);
    const byId = await runCli(['results', job, '--format', 'csv', '--id', 'r2', '--model', rows[0]!.model], { env: e2e.env });
    const csvLines = byId.stdout.trim().split('\n');
    assert.equal(csvLines.length, 2, byId.stdout);
    assert.match(csvLines[1]!, /,filtered prompt 2,/);
    const table = await runCli(['results', job], { env: { ...e2e.env, COLUMNS: '100' } });
    for (const line of table.stdout.trimEnd().split('\n')) assert.ok([...line].length <= 100, `wider than 100 columns: ${line}`);
    const bad = await runCli(['results', job, '--state', 'faild'], { env: e2e.env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--state faild: an item ends succeeded, failed, timed_out, canceled, unknown/);
  });

  it('run with Temporal unreachable, and doctor, leave no output folder behind', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'no-temporal', baseUrls: e2e.sim.urls, items: [{ id: 'u1', prompt: 'unreachable' }] });
    const run = await runCli(['run', job], { env: { ...e2e.env, TEMPORAL_ADDRESS: '127.0.0.1:1' } });
    assert.equal(run.code, 3, run.stderr);
    assert.ok(!existsSync(join(dir, 'out')), 'run left the output folder behind');
    const doctor = await runCli(['doctor', job], { env: e2e.env });
    assert.ok(!existsSync(join(dir, 'out')), `doctor left the output folder behind (exit ${doctor.code}): ${doctor.stderr}`);
  });
});
