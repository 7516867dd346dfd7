// Takes and redo (docs/takes.md), as a user meets them: the built CLI, a real Temporal development
// server and the simulator over HTTP, counting creates and their seeds at the gateway, hashing every
// file before and after, so "only the chosen items, nothing overwritten" is what is checked.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openStorage } from '../../storage';
import { appendPicks } from '../../storage/records/picks';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';

const KEY = 'sk-test-takes-0123456789abcd';
const MODEL_VARIANTS = 'models:\n  seedance-1-0-pro-250528:\n    variants: 2';

type Row = { key: string; state: string; take?: number; seed?: number; redo_of?: string; file: string | null; pick?: string };

function rows(dir: string): Row[] {
  const path = join(dir, 'out', 'manifest.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Row);
}

/** sha256 of every video under out/, by name. */
function hashes(dir: string): Map<string, string> {
  const out = join(dir, 'out');
  return new Map(
    readdirSync(out)
      .filter((n) => n.endsWith('.mp4'))
      .map((n) => [
        n,
        createHash('sha256')
          .update(readFileSync(join(out, n)))
          .digest('hex'),
      ]),
  );
}

function assertKept(before: Map<string, string>, after: Map<string, string>): void {
  for (const [name, sha] of before) assert.equal(after.get(name), sha, `${name} is unchanged`);
}

/** Picks as `reelflow review` writes them (storage/records/picks.ts), beside the manifest. */
function pickTakes(dir: string, picks: Array<[string, 'keep' | 'reject']>): Promise<void> {
  const storage = openStorage({ storage: 'local', dir: join(dir, 'out') });
  return appendPicks(
    storage,
    picks.map(([key, verdict]) => ({ key, verdict, at: new Date().toISOString() })),
  );
}

describe('takes: variants with seeds, --redo rejected, --only, --redo failed, results --kept', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [200, 500], seed: 26 });
  const creates = (prompt: string) => e2e.sim.stats().createsByPrompt[prompt] ?? 0;
  const seeds = (prompt: string) => e2e.sim.stats().seedsByPrompt[prompt] ?? [];
  const items = (p: string) => ['a', 'b', 'c'].map((id) => ({ id, prompt: `${p} ${id}` }));

  it('variants: 2 sends two distinct seeds per item, and a re-run the same seeds; only the rejected items get new takes', async () => {
    const dir = tempDir();
    // Priced, so that the redo's summary has a spend to tell apart from the job's.
    const extra = `${MODEL_VARIANTS}\npricing:\n  seedance-1-0-pro-250528:\n    per_video: 0.5`;
    const job = writeJob(dir, { name: 'takes-a', baseUrls: e2e.sim.urls, items: items('takes-a'), extra });
    const first = await runCli(['run', job], { env: e2e.env });
    assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`);
    assert.deepEqual([...hashes(dir).keys()].sort(), [
      '001-a-t2.mp4',
      '001-a.mp4',
      '002-b-t2.mp4',
      '002-b.mp4',
      '003-c-t2.mp4',
      '003-c.mp4',
    ]);
    for (const id of ['a', 'b', 'c']) {
      assert.equal(creates(`takes-a ${id}`), 2);
      assert.equal(new Set(seeds(`takes-a ${id}`)).size, 2, `two distinct seeds for ${id}`);
    }
    const rowA = rows(dir).find((r) => r.key === 'a~t2');
    assert.equal(rowA?.take, 2);
    assert.ok(rowA?.seed !== undefined && seeds('takes-a a').includes(rowA.seed), 'the row records the seed sent');

    // The same job file rendered afresh elsewhere sends the same seeds again.
    const copy = tempDir();
    cpSync(job, join(copy, 'takes-a.yaml'));
    const again = await runCli(['run', join(copy, 'takes-a.yaml')], { env: e2e.env });
    assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
    for (const id of ['a', 'b', 'c']) {
      const sent = seeds(`takes-a ${id}`);
      assert.deepEqual(sent.slice(2).sort(), sent.slice(0, 2).sort(), `${id}: the re-run sent the same seeds`);
    }

    const before = hashes(dir);
    await pickTakes(dir, [
      ['a~t2', 'reject'],
      ['c', 'reject'],
      ['b', 'keep'],
    ]);
    const createsBefore = e2e.sim.stats().tasksCreated;
    const redo = await runCli(['run', job, '--redo', 'rejected'], { env: e2e.env });
    assert.equal(redo.code, 0, `${redo.stdout}\n${redo.stderr}`);
    assert.equal(e2e.sim.stats().tasksCreated - createsBefore, 2, 'exactly the two rejected takes were made anew');
    assert.equal(creates('takes-a a'), 5);
    assert.equal(creates('takes-a b'), 4);
    assert.equal(creates('takes-a c'), 5);
    const after = hashes(dir);
    assertKept(before, after);
    assert.deepEqual([...after.keys()].filter((n) => !before.has(n)).sort(), ['001-a-t3.mp4', '003-c-t3.mp4']);
    const redone = rows(dir).filter((r) => r.redo_of);
    assert.deepEqual(redone.map((r) => [r.key, r.redo_of, r.take, r.state]).sort(), [
      ['a~t3', 'a~t2', 3, 'succeeded'],
      ['c~t3', 'c', 3, 'succeeded'],
    ]);
    // Its summary says the redo's spend beside the redo's estimate, and the job's apart: not the
    // job's $4.00 "of $1.00 estimated" (docs/takes.md, "Redo").
    assert.match(redo.stdout, /^this run: \$1\.00 \(\$0\.00 billed, \$1\.00 estimated\) of \$1\.00 estimated$/m, redo.stdout);
    assert.match(redo.stdout, /^the job: {2}\$4\.00 \(\$0\.00 billed, \$4\.00 estimated\), every run of its items$/m, redo.stdout);

    // The same command again: each rejected take has its new take already.
    const twice = await runCli(['run', job, '--redo', 'rejected'], { env: e2e.env });
    assert.equal(twice.code, 0, `${twice.stdout}\n${twice.stderr}`);
    assert.match(twice.stderr, /nothing to redo/);
    assert.equal(e2e.sim.stats().tasksCreated - createsBefore, 2);

    // results: every take with its pick; --kept: the kept files, one path a line.
    await pickTakes(dir, [['a~t3', 'keep']]);
    const json = await runCli(['results', job, '--format', 'json'], { env: e2e.env });
    assert.equal(json.code, 0, json.stderr);
    const shown = JSON.parse(json.stdout) as Row[];
    assert.deepEqual(
      shown.map((r) => [r.key, r.pick ?? '']),
      [
        ['a', ''],
        ['a~t2', 'reject'],
        ['a~t3', 'keep'],
        ['b', 'keep'],
        ['b~t2', ''],
        ['c', 'reject'],
        ['c~t2', ''],
        ['c~t3', ''],
      ],
    );
    const table = await runCli(['results', job], { env: e2e.env });
    assert.match(table.stdout, /a~t3 +succeeded, kept/);
    const kept = await runCli(['results', job, '--kept'], { env: e2e.env });
    assert.equal(kept.code, 0, kept.stderr);
    assert.equal(kept.stdout, `${join(dir, 'out', '001-a-t3.mp4')}\n${join(dir, 'out', '002-b.mp4')}\n`);
    const keptJson = await runCli(['results', job, '--kept', '--format', 'json'], { env: e2e.env });
    assert.deepEqual(JSON.parse(keptJson.stdout), [
      { key: 'a~t3', path: join(dir, 'out', '001-a-t3.mp4') },
      { key: 'b', path: join(dir, 'out', '002-b.mp4') },
    ]);
  });

  it('--only makes one new take of the named items; --redo failed makes new takes of exactly the failed ones', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'takes-b', baseUrls: e2e.sim.urls, items: items('takes-b') });
    const first = await runCli(['run', job], { env: e2e.env });
    assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`);
    const before = hashes(dir);

    e2e.sim.setFaults({ failRate: 1 });
    let only;
    try {
      only = await runCli(['run', job, '--only', 'a,c'], { env: e2e.env });
    } finally {
      e2e.sim.setFaults({ failRate: 0 });
    }
    assert.equal(only.code, 1, `${only.stdout}\n${only.stderr}`);
    assert.deepEqual(
      ['a', 'b', 'c'].map((id) => creates(`takes-b ${id}`)),
      [2, 1, 2],
    );
    assert.deepEqual(
      rows(dir)
        .filter((r) => r.take === 2)
        .map((r) => [r.key, r.state, r.redo_of])
        .sort(),
      [
        ['a~t2', 'failed', 'a'],
        ['c~t2', 'failed', 'c'],
      ],
    );

    const redo = await runCli(['run', job, '--redo', 'failed'], { env: e2e.env });
    assert.equal(redo.code, 0, `${redo.stdout}\n${redo.stderr}`);
    assert.deepEqual(
      ['a', 'b', 'c'].map((id) => creates(`takes-b ${id}`)),
      [3, 1, 3],
    );
    const after = hashes(dir);
    assertKept(before, after);
    assert.deepEqual([...after.keys()].filter((n) => !before.has(n)).sort(), ['001-a-t3.mp4', '003-c-t3.mp4']);

    const unknown = await runCli(['run', job, '--only', 'zz'], { env: e2e.env });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--only: no item of this job has the id or key "zz"/);
  });

  it('a job without variants keeps its keys and names, sends no seed, and a re-run renders nothing again', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'takes-c', baseUrls: e2e.sim.urls, items: [...items('takes-c'), { prompt: 'takes-c no id' }] });
    const first = await runCli(['run', job], { env: e2e.env });
    assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`);
    const written = rows(dir).sort((x, y) => (x.file ?? '').localeCompare(y.file ?? ''));
    assert.deepEqual(
      written.slice(0, 3).map((r) => [r.key, r.file, r.take, r.seed]),
      [
        ['a', '001-a.mp4', undefined, undefined],
        ['b', '002-b.mp4', undefined, undefined],
        ['c', '003-c.mp4', undefined, undefined],
      ],
    );
    assert.match(written[3]?.key ?? '', /^[0-9a-f]{12}$/);
    assert.equal(written[3]?.file, `004-${written[3]?.key}.mp4`);
    assert.deepEqual(seeds('takes-c a'), []);
    const before = hashes(dir);
    const createsBefore = e2e.sim.stats().tasksCreated;
    const again = await runCli(['run', job], { env: e2e.env });
    assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
    assert.equal(e2e.sim.stats().tasksCreated, createsBefore, 'nothing rendered again');
    assertKept(before, hashes(dir));
  });
});
