// Names checked where they will be written (docs/files.md): each case failed only at write time, after a paid render.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { linkSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { errorsOf, load, plan, tempJobDir } from './helpers';
import { loadJobFile } from '../../../jobfile';

const HEAD = 'name: t\ngateway:\n  base_urls: [http://127.0.0.1:8787]\ndefaults:\n  model: m\n';

describe('output names where they are written', () => {
  it("counts a name's length in bytes: 190 CJK characters are 570 bytes", async () => {
    const title = '漢'.repeat(190);
    const errors = await errorsOf(`${HEAD}output:\n  name: "{title}"\nitems_from:\n  file: rows.csv\n`, {
      'rows.csv': `prompt,title\nhi,${title}\n`,
    });
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(errors[0]!, /has a file name of 570 bytes in UTF-8; at most 245 fit/);
    // 81 CJK characters (243 bytes) leave room for ".webm.part".
    const ok = await plan(`${HEAD}output:\n  name: "{title}"\nitems_from:\n  file: rows.csv\n`, {
      'rows.csv': `prompt,title\nhi,${'漢'.repeat(81)}\n`,
    });
    assert.equal(ok.items.length, 1);
  });

  it('refuses an S3 name under the manifest/ prefix before anything is created', async () => {
    const errors = await errorsOf(
      `${HEAD}output:\n  storage: s3\n  s3:\n    bucket: videos\n  name: "manifest/{id}"\nitems:\n  - id: a\n    prompt: hi\n`,
    );
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(
      errors[0]!,
      /output name "manifest\/a" of items\[0\] starts with the folder "manifest\/", which reelflow uses for its own files/,
    );
    assert.deepEqual(await errorsOf(`${HEAD}output:\n  name: "manifest-{id}"\nitems:\n  - id: a\n    prompt: hi\n`), []);
  });

  it('refuses a name that needs a folder where another item writes its file', async () => {
    const errors = await errorsOf(`${HEAD}output:\n  name: "{slot}"\nitems:\n  - prompt: one\n    id: a\nitems_from:\n  file: rows.csv\n`, {
      'rows.csv': 'id,prompt,slot\nb,two,grp\nc,three,grp.mp4/x\n',
    });
    assert.ok(
      errors.some((e) => /needs the folder "grp\.mp4", where \S*rows\.csv line 2 writes its video/.test(e)),
      errors.join('\n'),
    );
    const reverse = await errorsOf(`${HEAD}output:\n  name: "{slot}"\nitems_from:\n  file: rows.csv\n`, {
      'rows.csv': 'id,prompt,slot\nb,two,grp.mov/x\nc,three,grp\n',
    });
    assert.ok(
      reverse.some((e) => /writes "grp\.mov", a folder that \S*rows\.csv line 2 needs for its output/.test(e)),
      reverse.join('\n'),
    );
  });

  it('warns about names that differ only in case', async () => {
    const p = await plan(`${HEAD}output:\n  name: "{id}"\nitems:\n  - id: Hero\n    prompt: one\n  - id: hero\n    prompt: two\n`);
    assert.equal(p.warnings.length, 1, p.warnings.join('\n'));
    assert.match(p.warnings[0]!, /output "hero" differs from "Hero" only in case: on macOS and Windows they are the same file/);
  });

  it('warns about names that differ only in Unicode normalization (NFC and NFD)', async () => {
    const nfc = 'caf\u00e9';
    const nfd = 'cafe\u0301';
    const p = await plan(`${HEAD}output:\n  name: "{title}"\nitems_from:\n  file: rows.csv\n`, {
      'rows.csv': `prompt,title\none,${nfc}\ntwo,${nfd}\n`,
    });
    assert.equal(p.warnings.length, 1, p.warnings.join('\n'));
    assert.match(p.warnings[0]!, /differs from "caf.+" only in Unicode normalization \(NFC\/NFD\)/);
  });
});

// With output.dir "." a name could be one of the job's own inputs, and the render
// replaced it.
describe("an output never replaces the job's own inputs", () => {
  const job = (name: string, extra = '') =>
    `${HEAD}output:\n  dir: .\n  name: "${name}"\n${extra}items:\n  - id: hero\n    prompt: one\n    references:\n      - video: ./hero.mp4\n`;

  it('refuses an output stored as a local reference of the job, at the reference and naming it', async () => {
    const errors = await errorsOf(job('{id}'), { 'hero.mp4': Buffer.from('the user’s own video') });
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(
      errors[0]!,
      /^13:\d+: .*output "hero" of items\[0\] \(line 10\) would be stored as \S*hero\.mp4, which is a local reference of items\[0\]/,
    );
    assert.match(errors[0]!, /reelflow never replaces the job's own inputs/);
  });

  it("refuses an output stored over items_from's file", async () => {
    const rows = await errorsOf(`${HEAD}output:\n  dir: .\n  name: "rows"\nitems_from:\n  file: rows.mp4\n  format: csv\n`, {
      'rows.mp4': 'id,prompt\na,one\n',
    });
    assert.ok(
      rows.some((e) => /rows\.mp4, which is the items_from file/.test(e)),
      rows.join('\n'),
    );
  });

  it('another name, or another folder, is fine', async () => {
    assert.deepEqual(await errorsOf(job('{id}-render'), { 'hero.mp4': Buffer.from('v') }), []);
    assert.deepEqual(await errorsOf(job('{id}').replace('dir: .', 'dir: ./out'), { 'hero.mp4': Buffer.from('v') }), []);
  });
});

// Links planted where outputs go are named by validate, before a paid render.
describe('links planted under the output location', () => {
  const yaml = (name: string) =>
    `${HEAD}output:\n  dir: ./out\n  name: "${name}"\nitems:\n  - id: a\n    prompt: one\n  - id: b\n    prompt: two\n`;
  async function errorsIn(dir: string): Promise<string[]> {
    const r = await loadJobFile(join(dir, 'job.yaml'));
    return r.ok ? [] : r.errors.map((e) => `${e.line}:${e.column}: ${e.message}`);
  }

  it('a folder link on the way (out/clips -> ../elsewhere) is named once, at output.name', async () => {
    const dir = tempJobDir({ 'job.yaml': yaml('clips/{id}'), 'elsewhere/.keep': '' });
    mkdirSync(join(dir, 'out'));
    symlinkSync('../elsewhere', join(dir, 'out', 'clips'));
    const errors = await errorsIn(dir);
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(
      errors[0]!,
      /^8:\d+: .*output "clips\/a" would be stored through \S+out\/clips is a symbolic link: reelflow never writes through one/,
    );
  });

  it('manifest.jsonl or a video name planted as a link is named', async () => {
    const dir = tempJobDir({ 'job.yaml': yaml('{id}'), victim: 'precious' });
    mkdirSync(join(dir, 'out'));
    symlinkSync('../victim', join(dir, 'out', 'manifest.jsonl'));
    symlinkSync('../victim', join(dir, 'out', 'b.webm'));
    const errors = await errorsIn(dir);
    assert.ok(
      errors.some((e) => /^7:\d+: .*the manifest \S+out\/manifest\.jsonl is a symbolic link/.test(e)),
      errors.join('\n'),
    );
    assert.ok(
      errors.some((e) => /output "b" would be stored through \S+out\/b\.webm is a symbolic link/.test(e)),
      errors.join('\n'),
    );
  });

  it('manifest.jsonl as a hard link to a file outside is named', async () => {
    const dir = tempJobDir({ 'job.yaml': yaml('{id}'), victim: 'precious' });
    mkdirSync(join(dir, 'out'));
    linkSync(join(dir, 'victim'), join(dir, 'out', 'manifest.jsonl'));
    const errors = await errorsIn(dir);
    assert.ok(
      errors.some((e) => /the manifest \S+out\/manifest\.jsonl is a file with 1 other hard link\(s\)/.test(e)),
      errors.join('\n'),
    );
  });

  it('links elsewhere in the output location, or a linked output location itself, are fine', async () => {
    const dir = tempJobDir({ 'job.yaml': yaml('{id}'), 'real/.keep': '' });
    symlinkSync('real', join(dir, 'out'));
    symlinkSync('.', join(dir, 'real', 'latest'));
    assert.deepEqual(await errorsIn(dir), []);
    assert.equal((await load(yaml('{id}'))).ok, true);
  });
});
