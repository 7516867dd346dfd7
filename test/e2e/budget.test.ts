// budget.max_usd as a user meets it (docs/costs.md): the built CLI, a real Temporal development
// server, the simulator over HTTP counting the creates that reach it, and two workers (the one in
// `run` and a `reelflow worker`), one of them killed with SIGKILL mid-run. The simulator publishes a
// price for one model at new-api's /api/pricing: a job of that model is priced by the gateway alone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli, startCli, type CliRun } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';
import { startTestTemporal } from '../support/temporal';
import { until } from '../support/wait';

const KEY = 'sk-test-budget-0123456789ab';
const MODEL = 'seedance-1-0-pro-250528';
/** Priced by the gateway alone (the simulator's /api/pricing): $0.50 a video. */
const GATEWAY_PRICED = 'kling-v2-1';

describe('a budget is never crossed', () => {
  const e2e = useTemporalAndSimulator(KEY, {
    ports: [0],
    renderMs: [3_000, 5_000],
    seed: 24,
    publishedPrices: { [GATEWAY_PRICED]: 0.5 },
  });
  const started: CliRun[] = [];
  after(async () => {
    for (const run of started) if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
    await Promise.all(started.map((run) => run.done));
  });

  it('allows 7 of 10 items across two workers, one SIGKILLed; a raised --budget renders the other 3, nothing twice', async () => {
    const dir = tempDir();
    const items = Array.from({ length: 10 }, (_, i) => ({ id: `b-${i + 1}`, prompt: `budget prompt ${i + 1}` }));
    const job = writeJob(dir, {
      name: 'budget-seven',
      baseUrls: e2e.sim.urls,
      items,
      maxInFlight: 10,
      extra: `pricing:\n  ${MODEL}:\n    per_video: 5\nbudget:\n  max_usd: 35`,
    });
    const creates = () => Object.values(e2e.sim.stats().createsByPrompt).reduce((x, y) => x + y, 0);
    const polled = () => Object.keys(e2e.sim.stats().pollsByTask).length;

    const worker = startCli(['worker'], { env: e2e.env });
    started.push(worker);
    await worker.waitFor(/polling task queue/, 60_000);
    const run = startCli(['run', job], { env: e2e.env });
    started.push(run);
    // Killed once renders are under way and every create made so far was answered (polled): a
    // create cut mid-flight would rightly count as spent, and this test counts exact creates.
    await until(() => creates() >= 3 && polled() === creates(), 120_000, 'three renders under way');
    worker.child.kill('SIGKILL');
    assert.equal((await worker.done).signal, 'SIGKILL');

    const stopped = await run.done;
    assert.equal(stopped.code, 1, `${stopped.stdout}\n${stopped.stderr}`);
    assert.match(
      stopped.stdout,
      /stopped: budget reached: \$35\.00 of \$35\.00 spent or reserved; 3 items not started; raise budget\.max_usd and run again/,
    );
    assert.equal(creates(), 7, JSON.stringify(e2e.sim.stats().createsByPrompt));
    assert.match(stopped.stdout, /spent: {4}\$35\.00 \(\$0\.00 billed, \$35\.00 estimated\) of \$50\.00 estimated/);
    const rows = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { key: string; state: string; cost_usd?: number; cost_source?: string });
    assert.equal(rows.length, 7, 'no row for the items not started');
    for (const row of rows) assert.deepEqual([row.state, row.cost_usd, row.cost_source], ['succeeded', 5, 'estimated']);

    const raised = await runCli(['run', job, '--budget', '50'], { env: e2e.env });
    assert.equal(raised.code, 0, `${raised.stdout}\n${raised.stderr}`);
    const byPrompt = e2e.sim.stats().createsByPrompt;
    for (const { prompt } of items) assert.equal(byPrompt[prompt], 1, `creates of ${prompt}: ${JSON.stringify(byPrompt)}`);
    // This run's spend (the 3 it rendered) apart from the job's (all 10): never the job's beside this run's estimate.
    assert.match(raised.stdout, /^this run: \$15\.00 \(\$0\.00 billed, \$15\.00 estimated\) of \$15\.00 estimated$/m);
    assert.match(
      raised.stdout,
      new RegExp(`^  ${MODEL}: \\$15\\.00 \\(\\$0\\.00 billed, \\$15\\.00 estimated\\) of \\$15\\.00 estimated$`, 'm'),
    );
    assert.match(raised.stdout, /^the job: {2}\$50\.00 \(\$0\.00 billed, \$50\.00 estimated\)/m);

    // status --json of the ended job: what every run spent, beside the estimate.
    const status = await runCli(['status', job, '--json'], { env: e2e.env });
    assert.equal(status.code, 0, status.stderr);
    const { spend, last_run_spend: lastRun } = JSON.parse(status.stdout) as {
      spend: { spent_usd: number; estimated_usd: number; estimate_usd: number };
      last_run_spend: { spent_usd: number; estimate_usd: number } | null;
    };
    assert.deepEqual([spend.spent_usd, spend.estimated_usd, spend.estimate_usd], [50, 50, 50]);
    // status of the ended job tells its last run's part apart, as that run's summary did.
    assert.deepEqual([lastRun?.spent_usd, lastRun?.estimate_usd], [15, 15]);
    const told = await runCli(['status', job], { env: e2e.env });
    assert.equal(told.code, 0, told.stderr);
    assert.match(told.stdout, /^last run: \$15\.00 \(\$0\.00 billed, \$15\.00 estimated\) of \$15\.00 estimated$/m, told.stdout);
    assert.match(told.stdout, /^the job: {2}\$50\.00 /m);
    const csv = await runCli(['results', job, '--format', 'csv'], { env: e2e.env });
    assert.equal(csv.code, 0, csv.stderr);
    const [head, first] = csv.stdout.split('\n');
    assert.match(head!, /,cost_usd,cost_source,rewrite_cost_usd,rewrite_cost_source,total_cost_usd$/);
    assert.match(first!, /,5,estimated,,,5$/);
  });

  it('refuses a job under a budget whose model has no price, naming it (exit 2, nothing sent)', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'budget-unpriced',
      baseUrls: e2e.sim.urls,
      items: [{ prompt: 'unpriced prompt 1' }],
    });
    const before = e2e.sim.stats().createsByPrompt['unpriced prompt 1'] ?? 0;
    const refused = await runCli(['run', job, '--budget', '10'], { env: e2e.env });
    assert.equal(refused.code, 2, `${refused.stdout}\n${refused.stderr}`);
    assert.match(refused.stderr, new RegExp(`a budget is set and these models have no price: ${MODEL} \\(no price for ${MODEL}\\)`));
    assert.equal(e2e.sim.stats().createsByPrompt['unpriced prompt 1'] ?? 0, before);
  });

  it('status of a running job and results (table, csv, json) show spent vs estimated, per model and in total', async () => {
    const dir = tempDir();
    // One at a time, renders of 3-5 s: the job is still running after its first item has a row.
    const items = Array.from({ length: 3 }, (_, i) => ({ id: `s-${i + 1}`, prompt: `spend shown ${i + 1}` }));
    const job = writeJob(dir, {
      name: 'spend-shown',
      baseUrls: e2e.sim.urls,
      items,
      maxInFlight: 1,
      extra: `pricing:\n  ${MODEL}:\n    per_video: 2`,
    });
    const run = startCli(['run', job], { env: e2e.env });
    started.push(run);
    const manifest = join(dir, 'out', 'manifest.jsonl');
    const rowsNow = () => {
      try {
        return readFileSync(manifest, 'utf8').trim().split('\n').filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    await until(() => rowsNow() >= 1, 120_000, 'the first item recorded');
    const status = await runCli(['status', job], { env: e2e.env });
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /creating \d+, rendering \d+/, 'the job is still running');
    assert.match(status.stdout, /^spent: {4}\$[24]\.00 \(\$0\.00 billed, \$[24]\.00 estimated\) of \$6\.00 estimated$/m);
    assert.match(status.stdout, new RegExp(`^  ${MODEL}: \\$[24]\\.00 .* of \\$6\\.00 estimated$`, 'm'));
    const json = await runCli(['status', job, '--json'], { env: e2e.env });
    const doc = JSON.parse(json.stdout) as { state: string; spend: { spent_usd: number; estimate_usd: number } | null };
    assert.ok(doc.spend && doc.spend.spent_usd >= 2 && doc.spend.estimate_usd === 6, json.stdout);
    assert.equal((await run.done).code, 0);

    const spent = /^spent: {4}\$6\.00 \(\$0\.00 billed, \$6\.00 estimated\) of \$6\.00 estimated$/m;
    const table = await runCli(['results', job], { env: e2e.env });
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /SIZE +COST/);
    assert.match(table.stdout, /\$2\.00 est\./);
    assert.match(table.stdout, spent);
    const csv = await runCli(['results', job, '--format', 'csv'], { env: e2e.env });
    assert.doesNotMatch(csv.stdout, /spent:/, 'stdout stays CSV');
    assert.match(csv.stderr, spent);
    const rows = await runCli(['results', job, '--format', 'json'], { env: e2e.env });
    assert.equal((JSON.parse(rows.stdout) as unknown[]).length, 3);
    assert.match(rows.stderr, spent);
  });

  it("a job priced by the gateway alone: status and results by job file show run's figures, with Temporal not knowing the job", async () => {
    const dir = tempDir();
    const items = Array.from({ length: 3 }, (_, i) => ({ id: `g-${i + 1}`, prompt: `gateway priced ${i + 1}`, model: GATEWAY_PRICED }));
    const job = writeJob(dir, { name: 'gateway-priced', baseUrls: e2e.sim.urls, items });
    const run = await runCli(['run', job, '--json'], { env: e2e.env });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const source = `price from gateway ${e2e.sim.urls[0]} \\(/api/pricing\\)`;
    assert.match(run.stderr, new RegExp(`^ +\\$1\\.50 {2}${GATEWAY_PRICED}: 3 items, ${source}$`, 'm'));
    const ran = (JSON.parse(run.stdout) as { spend: { spent_usd: number; estimate_usd: number } }).spend;
    assert.deepEqual([ran.spent_usd, ran.estimate_usd], [1.5, 1.5]);
    const spentLine = /^spent: {4}\$1\.50 \(\$0\.00 billed, \$1\.50 estimated\) of \$1\.50 estimated$/m;

    // By job file and by id while Temporal holds the job: the figures run showed.
    for (const target of [job, 'gateway-priced']) {
      const status = await runCli(['status', target, '--json'], { env: e2e.env });
      assert.equal(status.code, 0, `${target}: ${status.stderr}`);
      assert.deepEqual((JSON.parse(status.stdout) as { spend: unknown }).spend, ran, `status ${target}`);
    }

    // Temporal forgets the job (its retention passed): the job file's rows answer, with the prices
    // the run was started with, read from beside the manifest: no gateway asked, no key needed. A
    // second, empty server is that Temporal: reachable, and without the job. (Deleting the job from
    // the first takes the development server ~30 s, which a loaded CI machine did not keep to.)
    const forgetful = await startTestTemporal();
    try {
      const pricingAsked = e2e.sim.stats().requests['GET /api/pricing'];
      const noKey = { ...e2e.env, GATEWAY_API_KEY: undefined, TEMPORAL_ADDRESS: forgetful.address };
      const forgotten = await runCli(['status', job, '--json'], { env: noKey });
      assert.equal(forgotten.code, 0, forgotten.stderr);
      const doc = JSON.parse(forgotten.stdout) as { state: string; spend: unknown };
      assert.deepEqual([doc.state, doc.spend], ['forgotten', ran]);
      const human = await runCli(['status', job], { env: noKey });
      assert.match(human.stdout, spentLine);
      // results by job file reads the rows without Temporal: here it cannot be reached at all.
      const results = await runCli(['results', job, '--format', 'json'], { env: { ...noKey, TEMPORAL_ADDRESS: '127.0.0.1:9' } });
      assert.equal(results.code, 0, results.stderr);
      assert.match(results.stderr, spentLine);
      assert.equal(e2e.sim.stats().requests['GET /api/pricing'], pricingAsked, 'status and results asked the gateway nothing');
    } finally {
      await forgetful.stop();
    }
  });
});
