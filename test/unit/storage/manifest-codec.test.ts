// Every manifest row is checked against one schema as it is read (storage/manifest/codec.ts): a
// handed folder's manifest may hold rows reelflow never wrote. A row that is not one is skipped,
// and its reader is told the file, the line and what is wrong; the rows around it are read.
import assert from 'node:assert/strict';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ManifestFollower } from '../../../activities/manifest-follower';
import { LocalStorage } from '../../../storage/index';
import { decodeManifestRow, parseManifest } from '../../../storage/manifest/codec';
import { manifestRow, scratchPaths } from '../../support/storage';

const problemOf = (value: unknown): string => {
  const decoded = decodeManifestRow(typeof value === 'string' ? value : JSON.stringify(value));
  assert.ok('problem' in decoded, `${JSON.stringify(value)} is refused`);
  return decoded.problem;
};

describe('manifest rows: one schema', () => {
  const freshDir = scratchPaths('reelflow-manifest-codec-');

  it('accepts what reelflow writes, fields of later versions included', () => {
    const row = { ...manifestRow(1, { cost_usd: 0.5, cost_source: 'estimated', take: 2, vars: { color: 'red' } }), later_field: [1] };
    assert.deepEqual(decodeManifestRow(JSON.stringify(row)), { row });
  });

  it('refuses a row with fields missing, naming them', () => {
    const problem = problemOf({ key: 'old', state: 'failed', cost_usd: 0 });
    assert.match(problem, /^not a manifest row: missing "id", "index", "model", "protocol", "prompt", "task_id", /);
  });

  it('refuses ill-typed fields, amounts that are negative or not finite, and an unknown state', () => {
    assert.match(problemOf({ ...manifestRow(1), prompt: 42 }), /"prompt": invalid input: expected string, received number/);
    assert.match(problemOf({ ...manifestRow(1), cost_usd: -1000 }), /"cost_usd"/);
    assert.match(problemOf(JSON.stringify(manifestRow(1)).replace('"polls":', '"cost_usd":1e999,"polls":')), /"cost_usd"/);
    assert.match(problemOf({ ...manifestRow(1), state: 'done' }), /"state"/);
    assert.match(problemOf({ ...manifestRow(1), error: { kind: 'x' } }), /"error\.message"/);
    assert.match(problemOf('[1,2]'), /not a JSON object/);
    assert.match(problemOf('{"key":"a","state":"succ'), /not JSON/);
  });

  it('refuses a file that is not a name inside the output location', () => {
    for (const file of [
      '../../home/thesis/chapter1.docx',
      '/etc/passwd',
      'a/../../b.mp4',
      '002-b.mp4\n/home/x',
      'a\u001b[2Jb.mp4',
      'manifest.jsonl',
      'x.mp4.part',
    ]) {
      assert.match(
        problemOf({ ...manifestRow(1), file }),
        /^not a manifest row: "file": must be a relative path inside the output location|"file": is reserved/,
        JSON.stringify(file),
      );
    }
    assert.ok('row' in decodeManifestRow(JSON.stringify(manifestRow(1, { file: '2025-01-01/001-a.mp4' }))));
  });

  it('parseManifest numbers lines from the source given; a torn last line is reported, not read', () => {
    const text = `${JSON.stringify(manifestRow(1))}\n\n{"key":"old","state":"failed"}\n${JSON.stringify(manifestRow(2))}\n{"key":"k3","sta`;
    const parsed = parseManifest(Buffer.from(text), { file: '/out/manifest.jsonl', firstLine: 10 });
    assert.deepEqual(
      parsed.rows.map((r) => r.key),
      ['k1', 'k2'],
    );
    assert.deepEqual(
      parsed.skipped.map((s) => s.where),
      ['/out/manifest.jsonl:12', '/out/manifest.jsonl:14'],
    );
    assert.match(parsed.skipped[1]!.problem, /incomplete last line/);
    assert.equal(parsed.lines, 4);
  });

  it('local storage: a reader that goes on from its cursor names the lines of the whole file', async () => {
    const storage = new LocalStorage(freshDir());
    await storage.appendManifest(manifestRow(1));
    const first = await storage.readManifestSince(undefined);
    assert.deepEqual(first.skipped, []);
    await appendFile(join(storage.location, 'manifest.jsonl'), '{"key":"k9","state":"failed","cost_usd":0}\n');
    await storage.appendManifest(manifestRow(2));
    const next = await storage.readManifestSince(first.cursor);
    assert.equal(next.fromStart, false);
    assert.deepEqual(
      next.rows.map((r) => r.key),
      ['k2'],
    );
    assert.deepEqual(
      next.skipped.map((s) => s.where),
      [`${storage.location}/manifest.jsonl:2`],
    );
    const whole = await storage.readManifest();
    assert.deepEqual(
      whole.rows.map((r) => r.key),
      ['k1', 'k2'],
    );
    assert.equal(whole.skipped.length, 1);
  });

  it("the plan's manifest follower reads past a malformed row (it threw a TypeError on every page)", async () => {
    const dir = freshDir();
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, 'manifest.jsonl'),
      `{"key":"old","state":"failed","cost_usd":0}\n${JSON.stringify(manifestRow(1))}\n{"key":"k1","state":"succeeded","file":"../../x"}\n`,
    );
    const followed = await new ManifestFollower().latest(new LocalStorage(dir), { digest: 'd', offset: 0 });
    assert.deepEqual([...followed.rows.keys()], ['k1']);
    assert.equal(followed.rows.get('k1')?.file, manifestRow(1).file);
    assert.deepEqual(
      followed.skipped.map((s) => s.where),
      [`${dir}/manifest.jsonl:1`, `${dir}/manifest.jsonl:3`],
    );
  });
});
