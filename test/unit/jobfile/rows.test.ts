// Job files as users write them (issue 25 item 3): items_from columns checked like YAML keys, shared
// references in defaults, several references per row, and file names that every file system takes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { errorsOf, HEAD, load, plan } from './helpers';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

describe('items_from columns that nothing uses', () => {
  it('a CSV column that is no item key and no placeholder in use is an error at its header cell, with a did-you-mean', async () => {
    const errors = await errorsOf(`${HEAD}items_from:\n  file: p.csv\n`, {
      'p.csv': 'id,prompt,modle,secnods\na,one,veo-3.1-fast-generate-001,8\nb,two,veo-3.1-fast-generate-001,4\n',
    });
    assert.deepEqual(errors, [
      'p.csv:1:11: column "modle" is not an item key, and no prompt, reference or output.name uses it as {modle}; did you mean "model"?',
      'p.csv:1:17: column "secnods" is not an item key, and no prompt, reference or output.name uses it as {secnods}; did you mean "seconds"?',
    ]);
  });

  it('a JSONL key that is no item key and no placeholder in use is an error where it first appears, and no warning about defaults', async () => {
    const r = await load(`${HEAD}  resolution: 720p\nitems_from:\n  file: p.jsonl\n`, {
      'p.jsonl': '{"prompt": "one"}\n{"prompt": "two", "modle": "veo-3.1-fast-generate-001"}\n{"prompt": "three", "modle": "x"}\n',
    });
    assert.equal(r.ok, false);
    assert.ok(!r.ok);
    assert.deepEqual(
      r.errors.map((e) => `${e.line}:${e.column}: ${e.message}`),
      ['2:19: key "modle" is not an item key, and no prompt, reference or output.name uses it as {modle}; did you mean "model"?'],
    );
    assert.deepEqual(r.warnings, []);
  });

  it('an item whose row fails leaves no "defaults.resolution is not used" warning behind', async () => {
    const r = await load(`${HEAD}  resolution: 720p\nitems_from:\n  file: p.jsonl\n`, {
      'p.jsonl': '{"prompt": "one", "seconds": "ten"}\n',
    });
    assert.ok(!r.ok);
    assert.deepEqual(r.warnings, []);
  });

  it('a column used as a placeholder anywhere (prompt, output.name, reference) is a placeholder, not an error', async () => {
    const errors = await errorsOf(`${HEAD}items_from:\n  file: p.csv\noutput:\n  name: "{shot}-{index}"\n`, {
      'p.csv': 'prompt,shot,mood,pic\n"one, {mood}",s1,calm,logo\ntwo,s2,,logo\n',
    });
    assert.deepEqual(errors, [
      'p.csv:1:18: column "pic" is not an item key, and no prompt, reference or output.name uses it as {pic}; known item keys and placeholders in use: id, prompt, model, protocol, seconds, resolution, ratio, size, generate_audio, watermark, variants, seed, after, image, video, audio, {shot}, {mood}',
    ]);
    const good = await plan(`${HEAD}items_from:\n  file: p.csv\noutput:\n  name: "{shot}-{index}"\n`, {
      'p.csv': 'prompt,shot,mood,pic,image\n"one, {mood}",s1,calm,logo,./assets/{pic}.png\ntwo,s2,,logo,\n',
    });
    assert.deepEqual(
      good.items.map((i) => [i.outputName, i.request.prompt, i.request.references.length]),
      [
        ['s1-1', 'one, calm', 1],
        ['s2-2', 'two', 0],
      ],
    );
  });
});

describe('several references per row', () => {
  it('image, image_2, video_1 ... columns each add a reference, in column order', async () => {
    const r = await load(`${HEAD}items_from:\n  file: p.csv\n`, {
      'p.csv': 'prompt,image,image_2,video_1\none,./a.png,./b.png,https://cdn.example.com/c.mp4\ntwo,./b.png,,\n',
      'a.png': PNG,
      'b.png': PNG,
    });
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    assert.deepEqual(
      r.plan.items.map((i) => i.request.references.map((ref) => [ref.kind, ref.source])),
      [
        [
          ['image', join(r.dir, 'a.png')],
          ['image', join(r.dir, 'b.png')],
          ['video', 'https://cdn.example.com/c.mp4'],
        ],
        [['image', join(r.dir, 'b.png')]],
      ],
    );
  });

  it('a missing file in image_2 is reported at that cell', async () => {
    const errors = await errorsOf(`${HEAD}items_from:\n  file: p.csv\n`, {
      'p.csv': 'prompt,image,image_2\none,./assets/logo.png,./nope.png\n',
    });
    assert.equal(errors.length, 1);
    assert.match(errors[0] ?? '', /^p\.csv:2:23: image_2: image file "\.\/nope\.png" does not exist/);
  });
});

describe('defaults.references', () => {
  it('shared references come after each item’s own, and with placeholders', async () => {
    const r = await load(
      `${HEAD}  references:\n    - image: ./assets/logo.png\n    - audio: https://cdn.example.com/{id}.mp3\nitems:\n  - id: a\n    prompt: one\n    references:\n      - image: https://cdn.example.com/own.png\n  - id: b\n    prompt: two\n`,
    );
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    assert.deepEqual(
      r.plan.items.map((i) => i.request.references.map((ref) => ref.source)),
      [
        ['https://cdn.example.com/own.png', join(r.dir, 'assets/logo.png'), 'https://cdn.example.com/a.mp3'],
        [join(r.dir, 'assets/logo.png'), 'https://cdn.example.com/b.mp3'],
      ],
    );
  });

  it('a missing shared file is one error at defaults.references, not one per item', async () => {
    const errors = await errorsOf(
      `${HEAD}  references:\n    - image: ./nope.png\nitems:\n  - prompt: one\n  - prompt: two\n  - prompt: three\n`,
    );
    assert.equal(errors.length, 1);
    assert.match(errors[0] ?? '', /^7:14: defaults\.references\[0\]\.image file "\.\/nope\.png" does not exist/);
  });
});

describe('placeholders that would put characters unsafe on common file systems into a file name', () => {
  it('{ratio} giving 16:9 is written 16-9 in the output name, with one warning', async () => {
    const p = await plan(
      `${HEAD}matrix:\n  ratio: ["16:9", "9:16"]\nitems:\n  - id: a\n    prompt: one\noutput:\n  name: "{id}-{ratio}"\n`,
    );
    assert.deepEqual(
      p.items.map((i) => [i.request.ratio, i.outputName]),
      [
        ['16:9', 'a-16-9'],
        ['9:16', 'a-9-16'],
      ],
    );
    assert.equal(p.warnings.length, 1);
    assert.match(
      p.warnings[0] ?? '',
      /job\.yaml:\d+:\d+: warning: output\.name: \{ratio\} gives "16:9"; ":" is not allowed in file names on Windows and macOS, so it is written as "-" \(output "a-16-9"\)/,
    );
  });

  it('a CSV column value with ? and * is replaced too', async () => {
    const p = await plan(`${HEAD}items_from:\n  file: p.csv\noutput:\n  name: "{title}"\n`, {
      'p.csv': 'prompt,title\none,what?\ntwo,a*b|c\n',
    });
    assert.deepEqual(
      p.items.map((i) => i.outputName),
      ['what-', 'a-b-c'],
    );
    assert.equal(p.warnings.length, 1);
  });
});
