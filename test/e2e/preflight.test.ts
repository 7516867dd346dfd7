// The run's preflight (docs/preflight.md) as a user meets it: a wrong model name
// stops `run` with exit 2 before any paid call (no create, no Messages call reaches the simulator),
// naming the model, the line that sets it and the catalog's closest names; a gateway whose every
// address is down stops it with exit 3 in seconds, nothing started; a fleet worker refuses the
// create of a model the catalog lacks without sending it. Real Temporal, the simulator over HTTP.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { startSimulator } from '../../sim';
import { jobWorkflowId } from '../../workflows/ids';
import { runCli, startCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';

const KEY = 'sk-test-preflight-0123456789abcdef';

const creates = (stats: { requests: Record<string, number> }) =>
  (stats.requests['POST /v1/video/generations'] ?? 0) + (stats.requests['POST /v1/videos'] ?? 0);
const messagesCalls = (stats: { requests: Record<string, number> }) => stats.requests['POST /v1/messages'] ?? 0;

async function workflowExists(address: string, workflowId: string): Promise<boolean> {
  const connection = await Connection.connect({ address });
  try {
    return await new Client({ connection }).workflow
      .getHandle(workflowId)
      .describe()
      .then(
        () => true,
        () => false,
      );
  } finally {
    await connection.close();
  }
}

describe('run: preflight before the first create', { timeout: 240_000 }, () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0, 0], renderMs: [300, 600], seed: 22 });

  it('a model not in the catalog: exit 2, nothing sent, the model, its line and the closest names', async () => {
    const dir = tempDir('reelflow-preflight-');
    const job = writeJob(dir, {
      name: 'wrong-model',
      baseUrls: e2e.sim.urls,
      items: [
        { id: 'a', prompt: 'a lighthouse at dusk' },
        { id: 'b', prompt: 'a harbour at dawn', model: 'seedance-1-0-pro-250528' },
      ],
      extra: 'enhance:\n  model: claude-sonnet-4-6',
    });
    // defaults.model is line 8 of writeJob's file (two base addresses); make it the wrong name users type.
    writeFileSync(
      job,
      readFileSync(job, 'utf8').replace('  model: seedance-1-0-pro-250528\n  seconds', '  model: seedance-1.0-pro\n  seconds'),
    );
    const before = e2e.sim.stats();
    const started = Date.now();
    const result = await runCli(['run', job], { env: e2e.env });
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.ok(Date.now() - started < 30_000);
    const after = e2e.sim.stats();
    assert.equal(creates(after) - creates(before), 0, 'no create reached the gateway');
    assert.equal(messagesCalls(after) - messagesCalls(before), 0, 'no Messages call reached the gateway');
    assert.ok((after.requests['GET /v1/models'] ?? 0) > (before.requests['GET /v1/models'] ?? 0), 'the catalog was read');
    assert.match(result.stderr, /model "seedance-1\.0-pro" is not in the gateway's catalog for this key/);
    assert.match(result.stderr, /wrong-model\.yaml:8:10 \(defaults\.model\)/);
    assert.match(result.stderr, /closest in the catalog: seedance-1-0-pro-250528, /);
    assert.doesNotMatch(result.stderr, /"seedance-1-0-pro-250528" is not in/, 'the item that names a listed model is fine');
    assert.ok(!result.stdout.includes(KEY) && !result.stderr.includes(KEY));
    assert.equal(existsSync(join(dir, 'out', 'manifest.jsonl')), false, 'no manifest');
    assert.equal(await workflowExists(e2e.temporal.address, jobWorkflowId('wrong-model')), false, 'no workflow started');

    // The same words from doctor.
    const doctor = await runCli(['doctor', job], { env: e2e.env });
    assert.equal(doctor.code, 2, doctor.stdout + doctor.stderr);
    assert.match(doctor.stdout, /FAIL {2}model seedance-1\.0-pro: model "seedance-1\.0-pro" is not in the gateway's catalog for this key/);
    assert.match(doctor.stdout, /wrong-model\.yaml:8:10 \(defaults\.model\); closest in the catalog: seedance-1-0-pro-250528, /);
    assert.match(doctor.stdout, /ok {4}model seedance-1-0-pro-250528: in the catalog of /);
    assert.equal(creates(e2e.sim.stats()) - creates(before), 0);
  });

  it('an items_from row and an enhance model not in the catalog are named at their own lines', async () => {
    const dir = tempDir('reelflow-preflight-');
    writeFileSync(join(dir, 'rows.csv'), 'id,prompt,model\nr1,one,veo-3.1-fast-generate-001\nr2,two,veo3.1-generate\n');
    const job = writeJob(dir, {
      name: 'wrong-row',
      baseUrls: e2e.sim.urls,
      items: [],
      extra: 'items_from:\n  file: rows.csv\nenhance:\n  model: claude-sonet-4-6',
    });
    writeFileSync(job, readFileSync(job, 'utf8').replace(/items:\n+$/, ''));
    const before = e2e.sim.stats();
    const result = await runCli(['run', job], { env: e2e.env });
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.match(
      result.stderr,
      /model "veo3\.1-generate" is not in the gateway's catalog .*rows\.csv:3:\d+ \(items_from, column model\).*closest in the catalog: veo-3\.1-generate-001/,
    );
    assert.match(
      result.stderr,
      /enhance model "claude-sonet-4-6" is not in .*wrong-row\.yaml:\d+:\d+ \(enhance\.model\).*closest in the catalog: claude-sonnet-4-6/,
    );
    assert.doesNotMatch(result.stderr, /"veo-3.1-fast-generate-001" is not in/);
    assert.equal(creates(e2e.sim.stats()) + messagesCalls(e2e.sim.stats()), creates(before) + messagesCalls(before), 'nothing sent');
  });

  it('every base address down: exit 3 in seconds naming each, nothing started; back up, a plain run renders every item', async () => {
    const sim = await startSimulator({ ports: [0, 0], keys: [KEY], renderMs: [300, 600], seed: 23 });
    try {
      const [first, second] = sim.urls as [string, string];
      const dir = tempDir('reelflow-preflight-');
      const job = writeJob(dir, {
        name: 'all-down',
        baseUrls: [first, second],
        items: [1, 2, 3].map((n) => ({ id: `s${n}`, prompt: `shot ${n}` })),
      });
      await sim.setPortMode(0, 'refuse');
      await sim.setPortMode(1, 'refuse');
      const started = Date.now();
      const down = await runCli(['run', job], { env: e2e.env });
      const tookMs = Date.now() - started;
      assert.equal(down.code, 3, down.stdout + down.stderr);
      assert.ok(tookMs < 20_000, `exit after ${tookMs} ms`);
      assert.match(down.stderr, /no gateway address answers/);
      for (const base of [first, second])
        assert.ok(down.stderr.includes(`${base}: connection refused (ECONNREFUSED)`), `${base} named in: ${down.stderr}`);
      assert.equal(existsSync(join(dir, 'out', 'manifest.jsonl')), false, 'no manifest');
      assert.equal(await workflowExists(e2e.temporal.address, jobWorkflowId('all-down')), false, 'no workflow started');
      assert.equal(creates(sim.stats()), 0);

      await sim.setPortMode(0, 'up');
      await sim.setPortMode(1, 'up');
      const up = await runCli(['run', job], { env: e2e.env });
      assert.equal(up.code, 0, up.stdout + up.stderr);
      assert.match(up.stdout, /all-down: 3 of 3 succeeded/);
      assert.equal(creates(sim.stats()), 3);
      // The run's own worker reused the run's reading of the catalog: one GET per address.
      assert.equal(sim.stats().requests['GET /v1/models'], 2);
    } finally {
      await sim.close();
    }
  });

  it('a fleet worker refuses the create of a model the catalog lacks, sending nothing', async () => {
    const dir = tempDir('reelflow-preflight-');
    const job = writeJob(dir, {
      name: 'fleet-wrong-model',
      baseUrls: e2e.sim.urls,
      items: [
        { id: 'x', prompt: 'fleet one', model: 'veo-3.1-generate-001' },
        { id: 'y', prompt: 'fleet two', model: 'veo-4-fast' },
      ],
      extra: 'models:\n  veo-3.1-generate-001:\n    protocol: openai\n  veo-4-fast:\n    protocol: openai',
    });
    writeFileSync(job, readFileSync(job, 'utf8').replace('  seconds: "5"\n', '  seconds: "4"\n'));
    // The submitter has no key: it can check that the gateway answers, not what the key may use.
    const { GATEWAY_API_KEY: _k, ...submitterEnv } = e2e.env;
    // A keyless submission: the fleet's user opted in to carrying it (docs/keys.md).
    const worker = startCli(['worker', '--accept-keyless-jobs'], { env: e2e.env });
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      const before = e2e.sim.stats();
      const result = await runCli(['run', job, '--no-worker'], { env: submitterEnv });
      assert.notEqual(result.code, 0, result.stdout + result.stderr);
      const manifest = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8');
      const rows = manifest
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { key: string; state: string; error?: { kind: string; message: string } });
      assert.equal(rows.find((r) => r.key === 'x')?.state, 'succeeded', manifest);
      const y = rows.find((r) => r.key === 'y');
      if (y) assert.equal(y.error?.kind, 'model_unavailable', manifest);
      assert.match(
        result.stdout + result.stderr + manifest,
        /model \\?"veo-4-fast\\?" is not in the gateway's catalog for this key .*closest in the catalog: veo-3\.1-fast-generate-001, veo-3\.1-fast-generate-preview/,
      );
      const after = e2e.sim.stats();
      assert.equal(after.createsByPrompt['fleet two'] ?? 0, 0, 'the refused create was never sent');
      assert.equal(creates(after) - creates(before), 1, 'only the listed model was created');
      assert.ok(!result.stdout.includes(KEY) && !result.stderr.includes(KEY));
    } finally {
      worker.child.kill('SIGTERM');
      await worker.done;
    }
  });
});
