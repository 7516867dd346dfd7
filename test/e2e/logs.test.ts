// Logs worth reading (docs/logs.md): a worker with --log-format json leaves one
// structured event per thing that happened to an item and to the job, each with the job id and
// item key, never the key; --log-level chooses how much; an outage of the gateway or of Temporal
// is a line when it starts, a count while it lasts and a line when it ends, not a line per retry.
// The built CLI against a real Temporal dev server and the simulator.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ensureDevServer } from '../../worker/dev-server';
import { runCli, startCli, type CliRun } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';
import { sleep, until } from '../support/wait';

const KEY = 'sk-test-logs-0123456789abcdef';

interface Line {
  level: number;
  msg: string;
  event?: string;
  component?: string;
  [field: string]: unknown;
}

/** The worker's stdout as it grows, one JSON object a line (anything else fails the test). */
function jsonLines(run: CliRun): () => Line[] {
  let text = '';
  run.child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  return () =>
    text
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => {
        try {
          return JSON.parse(l) as Line;
        } catch {
          assert.fail(`not one JSON object: ${l}`);
        }
      });
}

const items = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i + 1}`, prompt: `${prefix} shot ${i + 1}` }));

async function stopWorker(worker: CliRun): Promise<void> {
  worker.child.kill('SIGTERM');
  const stopped = await worker.done;
  assert.equal(stopped.code, 0, stopped.stderr);
}

describe('logs: events, levels and outages (built CLI, real Temporal and simulator)', () => {
  // Renders fail now and then (failRate): an item ends failed with the gateway's reason.
  const e2e = useTemporalAndSimulator(KEY, { ports: [0, 0], renderMs: [3000, 5000], seed: 2727, faults: { failRate: 0.4 } });

  it('a small job: every event kind with its fields, the job id and item key on each, the key on none', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'logged', baseUrls: e2e.sim.urls, items: items('l', 6), maxInFlight: 2 });
    const worker = startCli(['worker', '--log-format', 'json', '--log-level', 'debug'], { env: e2e.env });
    const lines = jsonLines(worker);
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      const run = startCli(['run', job, '--no-worker'], { env: e2e.env });
      // The first address answers 503 for a while once renders are under way: a gateway outage there
      // (failover to the second, cooldowns), which ends when the address answers again.
      await until(() => lines().some((l) => l.event === 'item.created'), 60_000, 'a create');
      await e2e.sim.setPortMode(0, '503');
      await until(() => lines().some((l) => l.event === 'gateway.outage_started'), 30_000, 'the gateway outage line');
      await sleep(1_500);
      await e2e.sim.setPortMode(0, 'up');
      const result = await run.done;
      assert.ok(result.code === 0 || result.code === 1, result.stderr);
      await until(() => lines().some((l) => l.event === 'job.ended'), 30_000, 'the job.ended event');
    } finally {
      await e2e.sim.setPortMode(0, 'up');
      await stopWorker(worker);
    }
    const all = lines();
    const events = all.filter((l) => l.event !== undefined);
    const jobId = 'reelflow-logged';
    const of = (event: string) => events.filter((l) => l.event === event);
    const kinds = new Set(events.map((l) => l.event));
    for (const kind of [
      'job.started',
      'job.ended',
      'item.created',
      'item.status',
      'item.downloaded',
      'item.ended',
      'gateway.failover',
      'gateway.cooldown',
      'gateway.outage_started',
    ]) {
      assert.ok(kinds.has(kind), `no ${kind} event among ${[...kinds].join(', ')}`);
    }
    for (const line of events.filter((l) => l.event!.startsWith('item.') || l.event!.startsWith('job.'))) {
      assert.equal(line.jobId, jobId, JSON.stringify(line));
      if (line.event!.startsWith('item.')) {
        assert.match(String(line.key), /^l\d$/, JSON.stringify(line));
        assert.equal(line.model, 'seedance-1-0-pro-250528', JSON.stringify(line));
      }
    }
    for (const created of of('item.created')) {
      assert.equal(typeof created.taskId, 'string');
      assert.ok(e2e.sim.urls.includes(String(created.baseUrl)), JSON.stringify(created));
    }
    assert.ok(of('item.status').some((l) => l.from !== undefined && l.to === 'succeeded'));
    for (const downloaded of of('item.downloaded')) {
      assert.ok(Number(downloaded.bytes) > 0);
      assert.match(String(downloaded.sha256), /^[0-9a-f]{64}$/);
    }
    const ended = of('item.ended');
    assert.equal(ended.length, 6, JSON.stringify(ended));
    assert.deepEqual(new Set(ended.map((l) => l.key)), new Set(['l1', 'l2', 'l3', 'l4', 'l5', 'l6']));
    const failed = ended.filter((l) => l.state === 'failed');
    assert.ok(failed.length > 0, 'some render failed (failRate)');
    for (const line of failed) {
      assert.equal(line.kind, 'render_failed');
      assert.ok(typeof line.reason === 'string' && line.reason.length > 0 && line.reason.length <= 500);
    }
    const [jobEnded] = of('job.ended');
    const counts = jobEnded!.counts as Record<string, number>;
    assert.equal(counts.succeeded! + counts.failed!, 6, JSON.stringify(jobEnded));
    assert.equal(counts.failed, failed.length);
    for (const line of [...of('gateway.failover'), ...of('gateway.cooldown')]) {
      assert.equal(line.jobId, jobId, JSON.stringify(line));
      assert.match(String(line.key), /^l\d$/, JSON.stringify(line));
    }
    const [outage] = of('gateway.outage_started');
    assert.equal(outage!.baseUrl, e2e.sim.urls[0]);
    assert.ok(of('gateway.outage_ended').some((l) => l.baseUrl === e2e.sim.urls[0] && Number(l.failures) >= 1));
    // Debug lines are there (asked for); the key is on no line of either stream.
    assert.ok(all.some((l) => l.level === 20));
    // Nor an activity's task token (it completes the activity for whoever holds it).
    assert.ok(!all.some((l) => 'taskToken' in l));
    const text = JSON.stringify(all);
    assert.ok(!text.includes(KEY));
    const stopped = await worker.done;
    assert.ok(!stopped.stdout.includes(KEY) && !stopped.stderr.includes(KEY));
  });

  it('--log-level and REELFLOW_LOG_LEVEL choose the lines; an unknown level is exit 2 naming the allowed ones', async () => {
    const badFlag = await runCli(['worker', '--log-level', 'loud'], { env: e2e.env });
    assert.equal(badFlag.code, 2, badFlag.stderr);
    assert.match(badFlag.stderr, /loud.*debug, info, warn, error/);
    const badGlobal = await runCli(['--log-level', 'loud', 'worker'], { env: e2e.env });
    assert.equal(badGlobal.code, 2, badGlobal.stderr);
    assert.match(badGlobal.stderr, /loud.*debug, info, warn, error/);
    const badEnv = await runCli(['worker'], { env: { ...e2e.env, REELFLOW_LOG_LEVEL: 'chatty' } });
    assert.equal(badEnv.code, 2, badEnv.stderr);
    assert.match(badEnv.stderr, /REELFLOW_LOG_LEVEL.*chatty.*debug, info, warn, error/);

    // warn through the environment: the worker's info lines (polling, stopped) are not written.
    const quiet = startCli(['worker', '--log-format', 'json'], { env: { ...e2e.env, REELFLOW_LOG_LEVEL: 'warn' } });
    await quiet.waitFor(/polling task queue/, 60_000);
    await sleep(500);
    await stopWorker(quiet);
    const quietOut = (await quiet.done).stdout;
    assert.doesNotMatch(quietOut, /"level":(20|30)\b/);
    // The default is info: no debug lines, the info ones there. The global flag before the command works too.
    const normal = startCli(['--log-level', 'info', 'worker', '--log-format', 'json'], {
      env: { ...e2e.env, REELFLOW_LOG_LEVEL: 'debug' },
    });
    await normal.waitFor(/polling task queue/, 60_000);
    await sleep(500);
    await stopWorker(normal);
    const normalOut = (await normal.done).stdout;
    assert.match(normalOut, /"level":30\b/);
    assert.doesNotMatch(normalOut, /"level":20\b/);
  });

  it('both gateway addresses answer 503 for ~8 s during renders: per address a start and an end line, no warning per failed call', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'gwdown', baseUrls: e2e.sim.urls, items: items('g', 4), maxInFlight: 4 });
    const worker = startCli(['worker', '--log-format', 'json'], { env: e2e.env });
    const lines = jsonLines(worker);
    let from = 0;
    let to = 0;
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      const run = startCli(['run', job, '--no-worker'], { env: e2e.env });
      await until(() => lines().filter((l) => l.event === 'item.created').length >= 2, 60_000, 'two creates');
      from = lines().length;
      await Promise.all([e2e.sim.setPortMode(0, '503'), e2e.sim.setPortMode(1, '503')]);
      await sleep(8_000);
      await Promise.all([e2e.sim.setPortMode(0, 'up'), e2e.sim.setPortMode(1, 'up')]);
      const result = await run.done;
      assert.ok(result.code === 0 || result.code === 1, result.stderr);
      await until(() => lines().some((l) => l.event === 'job.ended' && l.jobId === 'reelflow-gwdown'), 30_000, 'the job.ended event');
      to = lines().length;
    } finally {
      await Promise.all([e2e.sim.setPortMode(0, 'up'), e2e.sim.setPortMode(1, 'up')]);
      await stopWorker(worker);
    }
    const during = lines().slice(from, to);
    const warnings = during.filter((l) => l.level >= 40 && l.event !== 'item.ended');
    const show = warnings.map((l) => JSON.stringify(l)).join('\n');
    assert.ok(warnings.length <= 6, `${warnings.length} warnings:\n${show}`);
    // Besides the outage lines, Core's warnings about what the outage slowed (TMPRL1104: the status
    // check, a local activity, held the workflow task): each kind once, not once per item.
    const core = warnings.filter((l) => l.component === 'temporal-core').map((l) => /TMPRL\d+/.exec(l.msg)?.[0] ?? l.msg);
    assert.equal(new Set(core).size, core.length, show);
    assert.ok(
      warnings.every((l) => l.event === 'gateway.outage_started' || l.component === 'temporal-core'),
      show,
    );
    const started = new Set(during.filter((l) => l.event === 'gateway.outage_started').map((l) => l.baseUrl));
    assert.ok(started.size >= 1, show);
    const ended = new Set(during.filter((l) => l.event === 'gateway.outage_ended').map((l) => l.baseUrl));
    assert.ok(
      [...ended].some((base) => started.has(base)),
      JSON.stringify(during.filter((l) => l.event?.startsWith('gateway.'))),
    );
    assert.ok(!during.some((l) => l.msg === 'Activity failed' && l.level >= 40), 'a retried attempt is no warning');
  });

  it('Temporal stopped for ~10 s under a running worker: a start line, a count at most, an end line', async () => {
    const worker = startCli(['worker', '--log-format', 'json'], { env: e2e.env });
    const lines = jsonLines(worker);
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      await sleep(1_000);
      const before = lines().length;
      await e2e.temporal.server.stop();
      await sleep(10_000);
      e2e.temporal.server = await ensureDevServer({ stateDir: e2e.temporal.stateDir, foreground: true, startTimeoutMs: 90_000 });
      await until(() => lines().some((l) => l.event === 'temporal.outage_ended'), 30_000, 'the end of the Temporal outage');
      await sleep(1_000);
      const during = lines().slice(before);
      assert.ok(during.length <= 6, `${during.length} lines:\n${during.map((l) => JSON.stringify(l)).join('\n')}`);
      const started = during.find((l) => l.event === 'temporal.outage_started');
      const ended = during.find((l) => l.event === 'temporal.outage_ended');
      assert.ok(started && started.level === 40, JSON.stringify(during));
      assert.ok(ended && ended.level === 30 && Number(ended.seconds) >= 5 && Number(ended.failures) >= 1, JSON.stringify(ended));
      assert.ok(!during.some((l) => /retried \d+ times/.test(l.msg)), 'no line per Core retry');
    } finally {
      await stopWorker(worker);
    }
  });
});
