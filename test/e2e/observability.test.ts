// A worker as a service sees it (docs/deploy.md "Health", docs/logs.md): Prometheus metrics on --metrics
// (the Temporal SDK's and reelflow's own) during a real run, failovers away from a dead first
// address, --log-format json on stdout without the key, and Core's warnings in the log file, not
// on the terminal. The built CLI against a real Temporal dev server and the simulator.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { freePort } from '../../worker/dev-server';
import { runCli, startCli, type CliRun } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';
import { PRICED_ENHANCE, rewriteUsd } from '../support/priced-enhance';

const KEY = 'sk-test-observability-0123456789';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format, the sample lines. */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

async function scrape(port: number): Promise<{ text: string; samples: Sample[] }> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(response.status, 200);
  const text = await response.text();
  return { text, samples: parseMetrics(text) };
}

/** Scrapes until `ready` holds, while `run` is still running; fails if it ends first. */
async function scrapeWhileRunning(port: number, run: CliRun, ready: (samples: Sample[]) => boolean, timeoutMs = 120_000) {
  let ended = false;
  void run.done.then(() => (ended = true));
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const scraped = await scrape(port).catch(() => undefined);
    if (ended) break;
    if (scraped) {
      last = scraped.text;
      if (ready(scraped.samples)) return scraped;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const result = ended ? await run.done : undefined;
  throw new Error(`metrics never showed what was expected while the run was going. Last scrape:\n${last}\nrun: ${JSON.stringify(result)}`);
}

/** Prompts rewritten through Messages, at $3 and $15 per million tokens (docs/costs.md); the renders at $0.50 each. */

const items = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i + 1}`, prompt: `${prefix} shot ${i + 1}` }));

describe('observability: metrics, JSON logs, Core warnings (built CLI, real Temporal and simulator)', () => {
  // The first base address refuses connections: every call fails over to the second.
  const e2e = useTemporalAndSimulator(KEY, { ports: [0, 0], portModes: ['refuse', 'up'], renderMs: [1500, 2500], seed: 1717 });
  const logFile = () => join(e2e.temporal.stateDir, 'logs', 'reelflow.log');

  it('run --metrics serves reelflow counters and the SDK metrics during the run, failovers off the dead address', async () => {
    const dir = tempDir();
    // One at a time: the first items are stored while the last still render, and the scrape sees both.
    const job = writeJob(dir, { name: 'scraped', baseUrls: e2e.sim.urls, items: items('m', 4), maxInFlight: 1 });
    const port = await freePort();
    const run = startCli(['run', job, '--metrics', `127.0.0.1:${port}`], { env: e2e.env });
    const [dead] = e2e.sim.urls as [string, string];
    const { samples, text } = await scrapeWhileRunning(
      port,
      run,
      (s) =>
        total(s, 'reelflow_creates_total', { outcome: 'created' }) > 0 &&
        total(s, 'reelflow_status_checks_total') > 0 &&
        total(s, 'reelflow_downloaded_bytes_total') > 0 &&
        total(s, 'reelflow_items_total', { state: 'succeeded' }) > 0 &&
        total(s, 'reelflow_render_seconds_count') > 0 &&
        // The Temporal SDK's own metrics, from the same exporter.
        total(s, 'temporal_workflow_completed') > 0 &&
        total(s, 'temporal_activity_execution_latency_count') > 0,
    );
    assert.match(text, /^# TYPE temporal_workflow_task_execution_latency histogram/m);
    assert.match(text, /^# HELP reelflow_creates_total Video creates, by model and outcome/m);
    assert.equal(total(samples, 'reelflow_creates_total', { model: 'seedance-1-0-pro-250528' }), total(samples, 'reelflow_creates_total'));
    assert.ok(total(samples, 'reelflow_status_checks_total', { outcome: 'succeeded' }) >= 1);
    assert.ok(total(samples, 'reelflow_render_seconds_count', { model: 'seedance-1-0-pro-250528' }) >= 1);
    // Failovers and cooldowns are counted for the dead address, and for no other.
    assert.ok(total(samples, 'reelflow_gateway_failovers_total', { base_url: dead }) >= 1, text);
    assert.ok(total(samples, 'reelflow_gateway_cooldowns_total', { base_url: dead }) >= 1, text);
    assert.equal(
      total(samples, 'reelflow_gateway_failovers_total'),
      total(samples, 'reelflow_gateway_failovers_total', { base_url: dead }),
    );

    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, new RegExp(`metrics: Prometheus on http://127\\.0\\.0\\.1:${port}/metrics`));
    assert.match(result.stdout, /scraped: 4 of 4 succeeded/);
    // The default log format is unchanged: the log file, nothing on stdout but the summary.
    assert.ok(!result.stdout.includes('"level"'));
    assert.ok(readFileSync(logFile(), 'utf8').includes(`"pid":${run.child.pid}`));
    assert.ok(!result.stdout.includes(KEY) && !result.stderr.includes(KEY));
  });

  it('reelflow worker --metrics --log-format json: exact totals after the job, JSON lines on stdout, no key', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'fleet', baseUrls: e2e.sim.urls, items: items('w', 3), maxInFlight: 3, extra: PRICED_ENHANCE });
    const port = await freePort();
    const worker = startCli(['worker', '--metrics', `0.0.0.0:${port}`, '--log-format', 'json'], { env: e2e.env });
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      const run = await runCli(['run', job, '--no-worker'], { env: e2e.env });
      assert.equal(run.code, 0, run.stderr);
      const manifest = () =>
        readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { bytes: number; state: string; prompt: string; file: string } & Record<string, unknown>);
      const rows = manifest();
      const { samples, text } = await scrape(port);
      assert.equal(total(samples, 'reelflow_items_total', { state: 'succeeded' }), 3, text);
      assert.equal(total(samples, 'reelflow_render_seconds_count'), 3, text);
      assert.equal(total(samples, 'reelflow_creates_total', { outcome: 'created' }), 3, text);
      assert.equal(
        total(samples, 'reelflow_downloaded_bytes_total'),
        rows.reduce((sum, r) => sum + r.bytes, 0),
      );
      assert.ok(total(samples, 'reelflow_gateway_failovers_total', { base_url: e2e.sim.urls[0]! }) >= 1, text);

      // Each prompt rewrite is priced from its answer's usage, exactly (not its max_tokens estimate),
      // and counted in the spend under the enhance model's name.
      for (const row of rows) {
        assert.deepEqual([row.rewrite_cost_usd, row.rewrite_cost_source], [rewriteUsd(row.prompt), 'usage'], JSON.stringify(row));
        assert.deepEqual([row.cost_usd, row.cost_source], [0.5, 'estimated']);
      }
      const rewrites = Math.round(rows.reduce((sum, r) => sum + rewriteUsd(r.prompt), 0) * 1e6) / 1e6;
      assert.equal(total(samples, 'reelflow_spend_usd_total', { model: 'claude-sonnet-4-6', source: 'usage' }), rewrites, text);
      assert.equal(total(samples, 'reelflow_spend_usd_total', { model: 'claude-sonnet-4-6', source: 'estimated' }), 0, text);
      assert.equal(total(samples, 'reelflow_spend_usd_total', { model: 'seedance-1-0-pro-250528', source: 'estimated' }), 1.5, text);
      const status = await runCli(['status', job, '--json'], { env: e2e.env });
      assert.equal(status.code, 0, status.stderr);
      const { spend } = JSON.parse(status.stdout) as { spend: { usage_usd: number; spent_usd: number } };
      assert.deepEqual([spend.usage_usd, spend.spent_usd], [rewrites, Math.round((1.5 + rewrites) * 1e6) / 1e6]);

      // The job edited (another length, the same prompts): every item renders again with its stored
      // rewrite. No Messages call, and nothing is added for the rewrites.
      const messagesCalls = () => Object.values(e2e.sim.stats().messagesAuth).reduce((a, b) => a + b, 0);
      const calls = messagesCalls();
      writeFileSync(job, readFileSync(job, 'utf8').replace('seconds: "5"', 'seconds: "6"'));
      const again = await runCli(['run', job, '--no-worker'], { env: e2e.env });
      assert.equal(again.code, 0, again.stderr);
      assert.equal(messagesCalls(), calls, 'the stored rewrites were reused');
      const rerun = manifest().slice(rows.length);
      assert.equal(rerun.length, 3);
      for (const row of rerun) assert.deepEqual([row.rewrite_cost_usd, row.rewrite_cost_source, row.cost_usd], [undefined, undefined, 0.5]);
      const after = await scrape(port);
      assert.equal(total(after.samples, 'reelflow_spend_usd_total', { model: 'claude-sonnet-4-6', source: 'usage' }), rewrites, after.text);
      assert.equal(
        total(after.samples, 'reelflow_spend_usd_total', { model: 'seedance-1-0-pro-250528', source: 'estimated' }),
        3,
        after.text,
      );
    } finally {
      worker.child.kill('SIGTERM');
    }
    const stopped = await worker.done;
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(
      stopped.stderr,
      new RegExp(`Prometheus metrics on 0\\.0\\.0\\.0:${port} on every interface \\(here: http://127\\.0\\.0\\.1:${port}/metrics\\)`),
    );
    const lines = stopped.stdout.trimEnd().split('\n');
    const entries = lines.map((line) => {
      try {
        return JSON.parse(line) as { msg?: string; level?: number; component?: string };
      } catch {
        assert.fail(`not one JSON object: ${line}`);
      }
    });
    assert.ok(entries.every((e) => typeof e.level === 'number' && typeof e.msg === 'string'));
    assert.ok(entries.some((e) => e.msg === 'worker polling'));
    assert.ok(entries.some((e) => e.msg === 'worker stopped'));
    // The gateway's failover notes arrive there too, and the key nowhere.
    assert.ok(
      entries.some((e) => e.component === 'gateway' && /connection refused|ECONNREFUSED/i.test(e.msg ?? '')),
      stopped.stdout,
    );
    assert.ok(!stopped.stdout.includes(KEY) && !stopped.stderr.includes(KEY));
  });

  it("routes Core's warnings (TMPRL1104) into the log file, not onto the terminal", async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'corewarn', baseUrls: e2e.sim.urls, items: items('c', 1) });
    // Core warns about every workflow task longer than this many seconds: 0 makes every task one.
    const env = { ...e2e.env, TEMPORAL_WORKFLOW_TASK_DURATION_WARN_SECONDS: '0' };
    const run = startCli(['run', job], { env });
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);
    // Core's console logger wrote to stdout: the terminal is both streams.
    assert.doesNotMatch(result.stdout + result.stderr, /TMPRL1104|Workflow task duration exceeded/);
    const warnings = readFileSync(logFile(), 'utf8')
      .split('\n')
      .filter((l) => l.includes(`"pid":${run.child.pid}`) && l.includes('TMPRL1104'))
      .map((l) => JSON.parse(l) as { level: number; component: string; msg: string });
    assert.ok(warnings.length > 0, 'the warning is in the log file');
    assert.equal(warnings[0]!.level, 40);
    assert.equal(warnings[0]!.component, 'temporal-core');
    assert.match(warnings[0]!.msg, /Workflow task duration exceeded/);
  });

  it('refuses bad --metrics and --log-format values with exit 2, before anything starts', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'usage', baseUrls: e2e.sim.urls, items: items('u', 1) });
    const bad = await runCli(['worker', '--metrics', 'metrics.example.com:9464'], { env: e2e.env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--metrics "metrics\.example\.com:9464": "metrics\.example\.com" is not an IP address.*use HOST:PORT/);
    const noPort = await runCli(['run', job, '--metrics', '127.0.0.1'], { env: e2e.env });
    assert.equal(noPort.code, 2);
    assert.match(noPort.stderr, /--metrics "127\.0\.0\.1": not HOST:PORT/);
    const noWorker = await runCli(['run', job, '--no-worker', '--metrics', '127.0.0.1:9464'], { env: e2e.env });
    assert.equal(noWorker.code, 2);
    assert.match(noWorker.stderr, /give --metrics to `reelflow worker`/);
    const format = await runCli(['worker', '--log-format', 'xml'], { env: e2e.env });
    assert.equal(format.code, 2);
    assert.match(format.stderr, /--log-format.*xml.*Allowed choices are file, json/);
    const both = await runCli(['run', job, '--json', '--log-format', 'json'], { env: e2e.env });
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--json and --log-format json both write to stdout/);

    // An address already in use: said, and nothing started.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as { port: number };
      const busy = await runCli(['worker', '--metrics', `127.0.0.1:${port}`], { env: e2e.env });
      assert.equal(busy.code, 2, busy.stderr);
      assert.match(busy.stderr, new RegExp(`cannot serve metrics on 127\\.0\\.0\\.1:${port}: .*Address already in use`));
      assert.doesNotMatch(busy.stderr, /polling task queue/);
      // With JSON logs, a supervisor also reads why the worker ended on stdout, as one JSON line.
      const busyJson = await runCli(['worker', '--metrics', `127.0.0.1:${port}`, '--log-format', 'json'], { env: e2e.env });
      assert.equal(busyJson.code, 2, busyJson.stderr);
      const [ended] = busyJson.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { level: number; exitCode: number; msg: string });
      assert.equal(ended?.level, 50);
      assert.equal(ended?.exitCode, 2);
      assert.match(ended!.msg, /Address already in use/);
    } finally {
      taken.close();
    }
    assert.equal(Object.keys(e2e.sim.stats().createsByPrompt).filter((p) => p.startsWith('u shot')).length, 0);
  });

  // About 12 s: the connection is retried for 10 s first.
  it('a command with --metrics that cannot reach Temporal says so and exits 3 (the exporter held the process open)', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'unreachable', baseUrls: e2e.sim.urls, items: items('x', 1) });
    const closed = await freePort();
    const started = Date.now();
    const command = startCli(['run', job, '--metrics', `127.0.0.1:${await freePort()}`], {
      env: { ...e2e.env, TEMPORAL_ADDRESS: `127.0.0.1:${closed}` },
    });
    const hung = setTimeout(() => command.child.kill('SIGKILL'), 45_000);
    const result = await command.done;
    clearTimeout(hung);
    assert.equal(result.signal, null, `it never exited: ${result.stderr}`);
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, new RegExp(`cannot reach the Temporal service at 127\\.0\\.0\\.1:${closed}`));
    assert.ok(Date.now() - started < 30_000, `took ${Date.now() - started} ms`);
  });
});
