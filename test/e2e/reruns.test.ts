// What a re-run reuses and what stops a job (docs/reruns.md), as a user meets it: the built CLI,
// a real Temporal development server and the simulator over HTTP, counting creates at the gateway.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startSimulator } from '../../sim';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli, startCli } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';
import { until } from '../support/wait';

const KEY = 'sk-test-reruns-0123456789ab';

type Row = { key: string; state: string; task_id: string | null; file: string | null; error: { kind: string } | null };

function manifest(dir: string): Row[] {
  const path = join(dir, 'out', 'manifest.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Row);
}

function latest(dir: string): Map<string, Row> {
  return new Map(manifest(dir).map((r) => [r.key, r]));
}

function items(prefix: string, n: number) {
  return Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i + 1}`, prompt: `${prefix} prompt ${i + 1}` }));
}

describe('re-runs reuse paid work; a job-wide cause stops the job', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0, 0], renderMs: [800, 1500], seed: 5 });

  const createsFor = (sim: { stats(): { createsByPrompt: Record<string, number> } }, prefix: string) =>
    Object.entries(sim.stats().createsByPrompt)
      .filter(([p]) => p.startsWith(`${prefix} `))
      .reduce((sum, [, n]) => sum + n, 0);

  it('a key disabled mid-run: the job stops after the items in flight, exits 2 naming the key; re-enabled, a plain run finishes creating each item once', async () => {
    const sim = await startSimulator({ ports: [0], keys: [KEY], renderMs: 6_000, seed: 8 });
    try {
      const dir = tempDir();
      const job = writeJob(dir, { name: 'key-off', baseUrls: sim.urls, items: items('key-off', 6), maxInFlight: 2 });
      const run = startCli(['run', job], { env: e2e.env });
      await until(() => createsFor(sim, 'key-off') >= 2, 30_000, 'two creates');
      sim.setKeys(['sk-some-other-key-entirely']);
      const stopped = await run.done;
      assert.equal(stopped.code, 2, `${stopped.stdout}\n${stopped.stderr}`);
      assert.match(stopped.stdout, /stopped: .*GATEWAY_API_KEY/);
      assert.match(stopped.stdout, /fix: .*key/);
      assert.match(stopped.stdout, /4 item\(s\) were not started/);
      assert.equal(createsFor(sim, 'key-off'), 2, 'no item started after the key was refused');
      const rows = [...latest(dir).values()];
      assert.equal(rows.length, 2, 'only the items in flight have rows');
      assert.ok(
        rows.every((r) => r.error?.kind === 'auth' && r.task_id),
        JSON.stringify(rows),
      );
      const heldTasks = new Map(rows.map((r) => [r.key, r.task_id]));

      sim.setKeys([KEY]);
      const again = await runCli(['run', job], { env: e2e.env });
      assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
      assert.match(again.stdout, /6 of 6 succeeded/);
      assert.equal(createsFor(sim, 'key-off'), 6, 'one create per item over both runs');
      for (const [key, taskId] of heldTasks) assert.equal(latest(dir).get(key)?.task_id, taskId, `${key} kept its task`);
    } finally {
      await sim.close();
    }
  });

  it('cancel mid-run, then run again: one create per item, and the canceled renders are the ones downloaded', async () => {
    const sim = await startSimulator({ ports: [0], keys: [KEY], renderMs: 10_000, seed: 9 });
    try {
      const dir = tempDir();
      const job = writeJob(dir, { name: 'cancel-rerun', baseUrls: sim.urls, items: items('cancel-rerun', 4), maxInFlight: 2 });
      const run = startCli(['run', job], { env: e2e.env });
      await until(() => Object.keys(sim.stats().pollsByTask).length >= 2, 30_000, 'two polled tasks');
      const cancel = await runCli(['cancel', job], { env: e2e.env });
      assert.equal(cancel.code, 0, cancel.stderr);
      assert.equal((await run.done).code, 1);
      const canceled = [...latest(dir).values()];
      assert.equal(canceled.length, 2);
      assert.ok(
        canceled.every((r) => r.state === 'canceled' && r.task_id),
        JSON.stringify(canceled),
      );

      const again = await runCli(['run', job], { env: e2e.env });
      assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
      assert.equal(createsFor(sim, 'cancel-rerun'), 4, 'creates == items');
      const after = latest(dir);
      for (const row of canceled) {
        const now = after.get(row.key)!;
        assert.equal(now.state, 'succeeded');
        assert.equal(now.task_id, row.task_id, `${row.key}: the canceled render's task was downloaded`);
      }
    } finally {
      await sim.close();
    }
  });

  it('a finished video deleted: running again creates nothing and downloads the same task again', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'deleted', baseUrls: e2e.sim.urls, items: items('deleted', 2) });
    assert.equal((await runCli(['run', job], { env: e2e.env })).code, 0);
    const before = latest(dir).get('deleted-2')!;
    rmSync(join(dir, 'out', before.file!));
    const creates = createsFor(e2e.sim, 'deleted');
    const again = await runCli(['run', job], { env: e2e.env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(createsFor(e2e.sim, 'deleted'), creates, 'no create');
    const after = latest(dir).get('deleted-2')!;
    assert.equal(after.task_id, before.task_id);
    assert.ok(existsSync(join(dir, 'out', after.file!)));
  });

  it('a reference file edited in place renders again (its content is in the request digest); an untouched one does not', async () => {
    const dir = tempDir();
    const png = (seed: string) => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(4_000, seed)]);
    writeFileSync(join(dir, 'look.png'), png('a'));
    writeFileSync(join(dir, 'kept.png'), png('k'));
    const job = writeJob(dir, {
      name: 'edited-reference',
      baseUrls: e2e.sim.urls,
      items: [
        { id: 'look', prompt: 'edited reference look' },
        { id: 'kept', prompt: 'edited reference kept' },
      ],
    });
    writeFileSync(
      job,
      readFileSync(job, 'utf8')
        .replace('    id: look', '    id: look\n    references:\n      - image: ./look.png')
        .replace('    id: kept', '    id: kept\n    references:\n      - image: ./kept.png'),
    );
    assert.equal((await runCli(['run', job], { env: e2e.env })).code, 0);
    const first = latest(dir).get('look')!;
    writeFileSync(join(dir, 'look.png'), png('b'));

    const again = await runCli(['run', job], { env: e2e.env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /started 1 of 2 item\(s\) \(1 already ended\); 1 changed since rendered/);
    assert.equal(e2e.sim.stats().createsByPrompt['edited reference look'], 2, 'the edited reference was rendered again');
    assert.equal(e2e.sim.stats().createsByPrompt['edited reference kept'], 1, 'the untouched one was not');
    const second = latest(dir).get('look')!;
    assert.notEqual(second.file, first.file);
    assert.ok(existsSync(join(dir, 'out', first.file!)), 'the earlier render is kept');
  });

  it('an edited prompt renders again, the earlier file kept; --dry-run and the start note say which item changed', async () => {
    const dir = tempDir();
    const spec = {
      name: 'edited',
      baseUrls: e2e.sim.urls,
      items: [
        { id: 'shot', prompt: 'edited first version' },
        { id: 'same', prompt: 'edited unchanged' },
      ],
    };
    const job = writeJob(dir, spec);
    assert.equal((await runCli(['run', job], { env: e2e.env })).code, 0);
    const first = latest(dir).get('shot')!;
    writeJob(dir, { ...spec, items: [{ id: 'shot', prompt: 'edited second version' }, spec.items[1]!] });

    const dry = await runCli(['run', job, '--dry-run'], { env: e2e.env });
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /1 item\(s\) changed since their last render/);
    assert.match(dry.stdout, /#1 shot -> 001-shot {2}\(changed since its last render\)/);
    assert.doesNotMatch(dry.stdout, /#2 same .*changed/);

    const again = await runCli(['run', job], { env: e2e.env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /started 1 of 2 item\(s\) \(1 already ended\); 1 changed since rendered/);
    assert.equal(e2e.sim.stats().createsByPrompt['edited second version'], 1);
    assert.equal(e2e.sim.stats().createsByPrompt['edited unchanged'], 1);
    const second = latest(dir).get('shot')!;
    assert.notEqual(second.file, first.file);
    assert.match(second.file!, /^001-shot\.[0-9a-f]{8}\.mp4$/);
    const videos = readdirSync(join(dir, 'out')).filter((f) => f.startsWith('001-shot'));
    assert.deepEqual(videos.sort(), [first.file, second.file].sort(), 'both renders kept');
    assert.deepEqual(
      manifest(dir)
        .filter((r) => r.key === 'shot')
        .map((r) => r.file),
      [first.file, second.file],
    );
    const third = await runCli(['run', job], { env: e2e.env });
    assert.match(third.stderr, /nothing to render/);
  });

  it('a second job on the same output location is refused before anything starts, exit 2 naming both jobs', async () => {
    const dir = tempDir();
    const owner = writeJob(dir, { name: 'owner-job', baseUrls: e2e.sim.urls, items: [{ id: 'x', prompt: 'owned one' }] });
    assert.equal((await runCli(['run', owner], { env: e2e.env })).code, 0);
    const intruder = writeJob(dir, { name: 'other-job', baseUrls: e2e.sim.urls, items: [{ id: 'x', prompt: 'intruding one' }] });
    const refused = await runCli(['run', intruder], { env: e2e.env });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /belongs to job "owner-job" \(workflow reelflow-owner-job\)/);
    assert.match(refused.stderr, /job "other-job" may not write there/);
    assert.ok(refused.stderr.includes(join(dir, 'out')), refused.stderr);
    assert.equal(e2e.sim.stats().createsByPrompt['intruding one'], undefined, 'nothing created');
    assert.equal(manifest(dir).length, 1);
    // The owner itself runs there as before.
    assert.equal((await runCli(['run', owner], { env: e2e.env })).code, 0);
  });
});
