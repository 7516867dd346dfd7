// `reelflow run` of a job file whose shots continue each other (docs/chains.md), end to end: the
// CLI, a real Temporal dev server, the simulator over HTTP. Shot 2 of 4 fails: 3-4 blocked naming
// it, exit 1; `--retry-failed` renders 2-4 only, each starting from the last decoded frame of the
// stored shot before it.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { lastFrame } from '../../media/frames';
import { runCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir } from '../support/jobs';
import { shotsInARow, writeChainJob } from '../support/chain-jobs';
import { endedStatusSchema, resultsSchema } from '../../cli/json-outputs';

const KEY = 'sk-test-chain-run-0123456789';
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function chainJob(dir: string, baseUrls: string[]): string {
  const items = shotsInARow('shot', 4, (k) => `story ${k}`);
  const settings = ['models:', '  doubao-seedance-2-0-260128:', '    frames: [first_frame, last_frame]'];
  return writeChainJob(dir, { name: 'chain-run', baseUrls, items, settings, maxInFlight: 4 });
}

/**
 * After shot 2 of 4 failed: shots 3 and 4 have rows `blocked`, naming shot 2, which every reader
 * shows as blocked (not "not rendered"), none counted as spend or as a failure that was charged.
 */
async function blockedAreRecorded(job: string, env: NodeJS.ProcessEnv): Promise<void> {
  const json = await runCli(['results', job, '--format', 'json'], { env });
  assert.equal(json.code, 0, json.stderr);
  const rows = resultsSchema.parse(JSON.parse(json.stdout));
  assert.deepEqual(
    rows.map((r) => [r.key, r.state, r.blocked_by ?? null, r.task_id, r.cost_usd ?? null]),
    [
      ['shot-1', 'succeeded', null, rows[0]!.task_id, rows[0]!.cost_usd ?? null],
      ['shot-2', 'failed', null, rows[1]!.task_id, rows[1]!.cost_usd ?? null],
      ['shot-3', 'blocked', 'shot-2', null, null],
      ['shot-4', 'blocked', 'shot-2', null, null],
    ],
  );
  assert.deepEqual(
    rows.slice(2).map((r) => r.error),
    [
      { kind: 'blocked', message: 'shot-2 ended failed' },
      { kind: 'blocked', message: 'shot-3 was blocked by shot-2' },
    ],
  );
  const csv = await runCli(['results', job, '--format', 'csv'], { env });
  const [head, ...lines] = csv.stdout.trim().split('\n');
  const column = head!.split(',').indexOf('blocked_by');
  assert.ok(column > 0, head);
  assert.deepEqual(
    lines.filter((l) => l.includes(',blocked,')).map((l) => l.split(',')[column]),
    ['shot-2', 'shot-2'],
  );
  const table = await runCli(['results', job], { env });
  assert.match(table.stdout, /shot-3\s+blocked\b/);
  assert.match(table.stdout, /blocked: shot-2 ended failed/);
  assert.doesNotMatch(table.stdout, /not rendered/);
  const status = await runCli(['status', job, '--json'], { env });
  const counts = endedStatusSchema.parse(JSON.parse(status.stdout)).counts;
  assert.deepEqual(
    { succeeded: counts.succeeded, failed: counts.failed, blocked: counts.blocked, pending: counts.pending },
    { succeeded: 1, failed: 1, blocked: 2, pending: 0 },
  );
  const text = await runCli(['status', job], { env });
  assert.match(text.stderr + text.stdout, /blocked shot-3: shot-2 ended failed/);
  assert.doesNotMatch(text.stderr + text.stdout, /not rendered yet/);
}

describe('reelflow run: a chain of shots', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [300, 700], seed: 5 });

  it('shot 2 of 4 fails: 3-4 blocked, exit 1; --retry-failed renders 2-4 from the frames before them', async () => {
    const dir = tempDir();
    const job = chainJob(dir, e2e.sim.urls);
    e2e.sim.setFaults({ failPrompts: ['story 2'] });
    const first = await runCli(['run', job], { env: e2e.env });
    e2e.sim.setFaults({ failPrompts: [] });
    assert.equal(first.code, 1, first.stderr);
    const said = first.stdout + first.stderr;
    assert.match(said, /2 blocked/);
    assert.match(said, /blocked shot-3: shot-2 ended failed/);
    assert.match(said, /blocked shot-4: shot-3 was blocked by shot-2/);
    const created = () => [1, 2, 3, 4].map((k) => e2e.sim.stats().createsByPrompt[`story ${k}`] ?? 0);
    assert.deepEqual(created(), [1, 1, 0, 0]);
    await blockedAreRecorded(job, e2e.env);

    const retry = await runCli(['run', job, '--retry-failed'], { env: e2e.env });
    assert.equal(retry.code, 0, retry.stderr);
    assert.deepEqual(created(), [1, 2, 1, 1]);
    const after = resultsSchema.parse(JSON.parse((await runCli(['results', job, '--format', 'json'], { env: e2e.env })).stdout));
    assert.deepEqual(
      after.map((r) => r.state),
      ['succeeded', 'succeeded', 'succeeded', 'succeeded'],
    );
    const rows = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { key: string; state: string; file: string | null });
    const files = new Map(rows.filter((r) => r.state === 'succeeded').map((r) => [r.key, r.file!]));
    const content = e2e.sim.stats().contentByPrompt;
    for (const k of [2, 3, 4]) {
      const png = join(dir, `last-${k - 1}.png`);
      await lastFrame(join(dir, 'out', files.get(`shot-${k - 1}`)!), png);
      const sent = content[`story ${k}`]!.at(-1)!.find((c) => c.role === 'first_frame');
      assert.equal(sent?.sha256, sha256(png), `shot ${k} starts from the last frame of shot ${k - 1}`);
    }
  });
});
