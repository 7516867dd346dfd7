// The vertical slice as a user runs it: `reelflow run` against the real simulator and a real
// Temporal development server, then the guarantees of re-running the same command.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli } from '../support/cli';
import { probeMp4, sha256File } from '../support/media';
import { tempDir, writeJob } from '../support/jobs';
import { Client, Connection } from '@temporalio/client';

const KEY = 'sk-test-e2e-run-0123456789';

describe('reelflow run (embedded Temporal, real simulator)', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0, 0], renderMs: [800, 1500], seed: 7 });

  it('renders a three-item job into valid MP4s with a manifest, exit 0', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'three',
      baseUrls: e2e.sim.urls,
      items: [
        { id: 'one', prompt: 'first shot' },
        { id: 'two', prompt: 'second shot' },
        { id: 'three', prompt: 'third shot' },
      ],
    });
    const result = await runCli(['run', job], { env: e2e.env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /three: 3 of 3 succeeded/);
    assert.match(result.stderr, /three: started 3 of 3 item\(s\) ->/);
    const out = join(dir, 'out');
    const videos = readdirSync(out)
      .filter((f) => f.endsWith('.mp4'))
      .sort();
    assert.deepEqual(videos, ['001-one.mp4', '002-two.mp4', '003-three.mp4']);
    for (const video of videos) {
      const info = probeMp4(join(out, video));
      if (info.duration !== undefined) assert.ok(Math.abs(info.duration - 5) < 0.6, `${video} lasts ${info.duration} s`);
    }
    const rows = readFileSync(join(out, 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(rows.length, 3);
    for (const row of rows) {
      assert.equal(row.state, 'succeeded');
      assert.equal(row.sha256, sha256File(join(out, row.file as string)));
      assert.ok((row.polls as number) >= 1);
      assert.ok(e2e.sim.urls.includes(row.base_url as string), `base_url ${String(row.base_url)}`);
      // Where the task was created, and what served the video (a base address here, or a CDN).
      assert.ok(e2e.sim.urls.includes(row.create_base_url as string), `create_base_url ${String(row.create_base_url)}`);
      assert.match(String(row.download_base_url), /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.match(String(row.task_id), /\S/);
    }
    assert.ok(!readdirSync(out).some((f) => f.endsWith('.part')), 'no partial files left');
    // Nothing anywhere carries the key.
    assert.ok(!result.stdout.includes(KEY) && !result.stderr.includes(KEY));
    assert.ok(!readFileSync(join(out, 'manifest.jsonl'), 'utf8').includes(KEY));

    // Running the finished job again renders nothing and creates nothing.
    const creates = Object.values(e2e.sim.stats().createsByPrompt).reduce((a, b) => a + b, 0);
    const again = await runCli(['run', job], { env: e2e.env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /three: nothing to render: all 3 item\(s\) already ended/);
    assert.equal(
      Object.values(e2e.sim.stats().createsByPrompt).reduce((a, b) => a + b, 0),
      creates,
      'no create on a finished job',
    );
    assert.match(again.stdout, /3 of 3 succeeded/);
  });

  it('renders again an output that was deleted, and only that one, from its task (no new create)', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'regen',
      baseUrls: e2e.sim.urls,
      items: [
        { id: 'a', prompt: 'regen a' },
        { id: 'b', prompt: 'regen b' },
      ],
    });
    assert.equal((await runCli(['run', job], { env: e2e.env })).code, 0);
    const { rmSync } = await import('node:fs');
    rmSync(join(dir, 'out', '002-b.mp4'));
    const before = e2e.sim.stats().createsByPrompt;
    const again = await runCli(['run', job], { env: e2e.env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /regen: started 1 of 2 item\(s\) \(1 already ended\)/);
    const afterStats = e2e.sim.stats().createsByPrompt;
    // Its task is still on the gateway: downloaded again, not paid again (docs/reruns.md).
    assert.equal(afterStats['regen b'], before['regen b']);
    assert.equal(afterStats['regen a'], before['regen a']);
    assert.ok(existsSync(join(dir, 'out', '002-b.mp4')));
  });

  it('reports failed renders with their reason and exits 1; --retry-failed renders them again', async () => {
    const dir = tempDir();
    e2e.sim.setFaults({ failRate: 1 });
    const job = writeJob(dir, { name: 'fails', baseUrls: e2e.sim.urls, items: [{ id: 'doomed', prompt: 'this one fails' }] });
    const result = await runCli(['run', job], { env: e2e.env });
    e2e.sim.setFaults({ failRate: 0 });
    assert.equal(result.code, 1, result.stderr);
    // The item's workflow closed before the command's worker stopped: left open, it made the next
    // run's start of the same item fail as "already started", and that run waited for ever.
    const connection = await Connection.connect({ address: e2e.temporal.address });
    try {
      const open = await new Client({ connection }).workflow.count(
        "WorkflowId STARTS_WITH 'reelflow-fails/' AND ExecutionStatus = 'Running'",
      );
      assert.equal(open.count, 0, 'no item workflow left open');
    } finally {
      await connection.close();
    }
    assert.match(result.stdout, /failed\s+#1 doomed\s+render_failed: \S+/);
    assert.match(result.stdout, /--retry-failed/);
    const plain = await runCli(['run', job], { env: e2e.env });
    assert.equal(plain.code, 1, 'a plain re-run keeps the failed item as it ended');
    const retried = await runCli(['run', job, '--retry-failed'], { env: e2e.env });
    assert.equal(retried.code, 0, retried.stderr);
    assert.equal(e2e.sim.stats().createsByPrompt['this one fails'], 2);
  });

  it('bad job files exit 2 with positioned errors and start nothing', async () => {
    const dir = tempDir();
    const job = join(dir, 'bad.yaml');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(job, 'version: 1\nname: bad\ngateway:\n  base_urls: [ftp://nope]\nitems:\n  - promt: hi\n');
    const result = await runCli(['run', job], { env: e2e.env });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /bad\.yaml:4:\d+: /);
    assert.match(result.stderr, /bad\.yaml:6:\d+: .*prompt/);
    const missing = await runCli(['run', join(dir, 'nope.yaml')], { env: e2e.env });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no such job file/);
  });

  it('a missing key variable is a clear usage error', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'nokey', baseUrls: e2e.sim.urls, items: [{ prompt: 'x' }] });
    const result = await runCli(['run', job], { env: { ...e2e.env, GATEWAY_API_KEY: '' } });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /GATEWAY_API_KEY is not set/);
  });
});
