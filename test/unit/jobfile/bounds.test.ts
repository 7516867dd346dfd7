// Bounded work on hostile job files and text that is not UTF-8 (docs/limits-input.md): a job
// file is data a user may have been handed, so its size is checked before anything is built. The
// cost tests run `validate` in a child with a capped heap and read the child's own time and peak
// memory (test/support/validate-probe.ts; CPU time, not wall time): the old code died there ("heap out of memory") or took
// seconds.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadJobFile } from '../../../jobfile';
import { HEAD, errorsOf, load, tempJobDir } from './helpers';

const PROBE = join(__dirname, '..', '..', 'support', 'validate-probe.ts');

interface Probe {
  code: number;
  ms: number;
  peakMb: number;
  stderr: string;
}

/** `reelflow validate file` in a child with a 300 MB heap; what it answered and what it cost. */
function probe(file: string): Probe {
  const child = spawnSync(process.execPath, ['--max-old-space-size=300', '--import', 'tsx', PROBE, file], {
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 1 << 20,
  });
  const line = child.stdout.trim().split('\n').pop() ?? '';
  assert.ok(
    line.startsWith('{'),
    `the probe ended without an answer (status ${child.status}, signal ${child.signal}):\n${child.stderr.slice(-800)}`,
  );
  return JSON.parse(line) as Probe;
}

function assertCheap(p: Probe, seconds = 1, peakMb = 200): void {
  assert.equal(p.code, 2, p.stderr);
  assert.ok(p.ms < seconds * 1000, `took ${Math.round(p.ms)} ms of CPU`);
  assert.ok(p.peakMb < peakMb, `peak memory ${Math.round(p.peakMb)} MB`);
}

const hundred = `[${Array.from({ length: 100 }, (_, i) => i).join(',')}]`;

describe('sizes are checked before anything is built', () => {
  it('four matrix keys of 100 values (10^8 items) end at once with exit 2, the line and the limit', () => {
    const yaml = `${HEAD}matrix:\n  a: ${hundred}\n  b: ${hundred}\n  c: ${hundred}\n  d: ${hundred}\nitems:\n  - id: x\n    prompt: "{a} {b} {c} {d}"\n`;
    assert.ok(yaml.length < 1600);
    const dir = tempJobDir({ 'job.yaml': yaml });
    const p = probe(join(dir, 'job.yaml'));
    assertCheap(p);
    assert.match(
      p.stderr,
      /job\.yaml:6:1: .*100000000 items \(matrix: 100 x 100 x 100 x 100 combinations x 1 item\); at most 200000 are allowed/,
    );
  });

  it('998 aliases of one large list are refused at the alias that passes the limit', () => {
    const refs = Array.from({ length: 5000 }, (_, i) => `{image: https://e.x/${i}.png}`).join(',');
    const items = Array.from({ length: 998 }, (_, i) => `  - prompt: p${i + 1}\n    references: *refs\n`).join('');
    const yaml = `${HEAD}items:\n  - prompt: p0\n    references: &refs [${refs}]\n${items}`;
    assert.ok(yaml.length < 200_000);
    const dir = tempJobDir({ 'job.yaml': yaml });
    const p = probe(join(dir, 'job.yaml'));
    assertCheap(p);
    // Each alias adds 10,001 values (the list, 5,000 maps and their 5,000 addresses): the 10th passes 100,000.
    assert.match(p.stderr, /job\.yaml:28:17: aliases add more than 100000 values to the job file/);
  });

  it('1,000,000 CSV rows are refused at the first row past the limit, naming the file and the row', () => {
    const rows = ['id,prompt'];
    for (let i = 0; i < 1_000_000; i++) rows.push(`r${i},a prompt number ${i}`);
    const dir = tempJobDir({ 'job.yaml': `${HEAD}items_from:\n  file: rows.csv\n` });
    writeFileSync(join(dir, 'rows.csv'), `${rows.join('\n')}\n`);
    const p = probe(join(dir, 'job.yaml'));
    // The 28 MB file itself is read whole: 167-173 MB peak on an idle machine, but 308 MB once in
    // CI with other test files beside it (garbage collection falls behind). The heap cap (300 MB),
    // which the old code died on, is what bounds it; 400 MB only catches a runaway.
    assertCheap(p, 3, 400);
    assert.match(p.stderr, /rows\.csv:200002:1: .*row 200001 .*at most 200000 items/);
  });

  it('the row limit leaves room for the matrix and the items list', async () => {
    const thousand = `[${Array.from({ length: 1000 }, (_, i) => i).join(', ')}]`;
    const job = `${HEAD}matrix:\n  k: ${thousand}\nitems:\n  - id: one\n    prompt: "x {k}"\nitems_from:\n  file: rows.txt\n`;
    const rows = (n: number) => Array.from({ length: n }, (_, i) => `p${i} {k}`).join('\n');
    // 1,000 combinations: 200 sources at most; the items list holds one, so the 200th row is one too many.
    const refused = await errorsOf(job, { 'rows.txt': rows(200) });
    assert.deepEqual(refused.length, 1, refused.join('\n'));
    assert.match(refused[0] ?? '', /^rows\.txt:200:1: .*row 200 .*at most 200000 items/);
    assert.deepEqual(await errorsOf(job, { 'rows.txt': rows(2) }), []);
  });

  it('a matrix product over the limit is one error at matrix, whatever else is wrong with the values', async () => {
    const errors = await errorsOf(`${HEAD}matrix:\n  a: ${hundred}\n  b: ${hundred}\n  c: ${hundred}\nitems:\n  - prompt: "{a}{b}{c}"\n`);
    assert.deepEqual(errors, [
      '6:1: the job expands to 1000000 items (matrix: 100 x 100 x 100 combinations x 1 item); at most 200000 are allowed',
    ]);
  });

  it('an alias inside the value it names is refused there (the loader overflowed its stack)', async () => {
    const errors = await errorsOf(`${HEAD}vars: &v\n  x: *v\nitems:\n  - prompt: hi\n`);
    assert.deepEqual(errors, ['7:6: the alias *v is inside the value it names: a loop']);
  });

  it('aliases that add little still work', async () => {
    const r = await load(
      `${HEAD}items:\n  - prompt: a\n    references: &r [{image: ./assets/logo.png}]\n  - prompt: b\n    references: *r\n`,
    );
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    assert.equal(r.plan.items[1]?.request.references.length, 1);
  });
});

describe('text that is not UTF-8', () => {
  it('a Latin-1 job file is refused naming the first bad byte: offset, line, column', async () => {
    const yaml = Buffer.concat([Buffer.from(`${HEAD}items:\n  - prompt: caf`), Buffer.from([0xe9]), Buffer.from(' cr\xe8me\n', 'latin1')]);
    const dir = tempJobDir({ 'job.yaml': yaml });
    const errors = await errorsOfFile(join(dir, 'job.yaml'));
    assert.deepEqual(errors, [
      `7:16: the file is not UTF-8 text: byte 0xE9 at offset ${HEAD.length + 22} is not valid UTF-8; save the file as UTF-8`,
    ]);
  });

  it('the column counts characters, not bytes, before the bad byte', async () => {
    const yaml = Buffer.concat([Buffer.from(`${HEAD}items:\n  - prompt: "ünï `), Buffer.from([0xff]), Buffer.from('"\n')]);
    const dir = tempJobDir({ 'job.yaml': yaml });
    assert.deepEqual(await errorsOfFile(join(dir, 'job.yaml')), [
      `7:18: the file is not UTF-8 text: byte 0xFF at offset ${HEAD.length + 26} is not valid UTF-8; save the file as UTF-8`,
    ]);
  });

  it('an items_from file in Latin-1 is refused at its own line and column', async () => {
    const errors = await errorsOf(`${HEAD}items_from:\n  file: rows.csv\n`, {
      'rows.csv': Buffer.concat([Buffer.from('id,prompt\na,fine\nb,caf'), Buffer.from([0xe9, 0x0a])]),
    });
    assert.deepEqual(errors, [
      'rows.csv:3:6: the file is not UTF-8 text: byte 0xE9 at offset 22 is not valid UTF-8; save the file as UTF-8',
    ]);
  });

  it('UTF-8 with a byte order mark, and four-byte characters, are fine', async () => {
    const r = await load(`\ufeff${HEAD}items:\n  - prompt: "a 🎬 clip"\n`);
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    assert.equal(r.plan.items[0]?.request.prompt, 'a 🎬 clip');
  });
});

describe('output.dir outside the job file folder', () => {
  it('is allowed, and named in a warning', async () => {
    const r = await load(`${HEAD}output:\n  dir: ../elsewhere/{job}\nitems:\n  - prompt: hi\n`);
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    const w = r.plan.warnings.find((x) => x.includes('output.dir'));
    assert.ok(w, JSON.stringify(r.plan.warnings));
    assert.match(w, /job\.yaml:7:8: warning: output\.dir: .*elsewhere\/t is outside the job file's folder/);
  });

  it('an absolute folder elsewhere is named too; the default inside the folder is not', async () => {
    const outside = await load(`${HEAD}output:\n  dir: /tmp/reelflow-elsewhere\nitems:\n  - prompt: hi\n`);
    assert.ok(outside.ok && outside.plan.warnings.some((w) => w.includes('/tmp/reelflow-elsewhere is outside')));
    const inside = await load(`${HEAD}items:\n  - prompt: hi\n`);
    assert.ok(inside.ok && inside.plan.warnings.length === 0, JSON.stringify(inside.ok && inside.plan.warnings));
  });
});

async function errorsOfFile(file: string): Promise<string[]> {
  const r = await loadJobFile(file, { runDate: '2025-03-14' });
  return r.ok ? [] : r.errors.map((e) => `${e.line}:${e.column}: ${e.message}`);
}
