// Takes (docs/takes.md): variants, {take}, seeds, keys and names; redo takes; validation.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadJobFile } from '../../../jobfile';
import { baseKeyOf, takeKey, takeOfKey, takeSeed } from '../../../jobfile/takes';
import { errorsOf, HEAD, plan, RUN_DATE, tempJobDir } from './helpers';

describe('variants', () => {
  it('a job without variants keeps its keys, names and requests exactly (no seed, no take)', async () => {
    const yaml = `${HEAD}matrix:\n  ratio: ["16:9", "9:16"]\nitems:\n  - id: shoe\n    prompt: a red shoe\n  - prompt: a blue hat\n`;
    const p = await plan(yaml);
    assert.deepEqual(
      p.items.map((i) => [i.key, i.outputName, i.take, i.request.seed]),
      [
        ['shoe.16-9', '001-shoe', undefined, undefined],
        ['shoe.9-16', '002-shoe', undefined, undefined],
        [p.items[2]?.key, `003-${p.items[2]?.key}`, undefined, undefined],
        [p.items[3]?.key, `004-${p.items[3]?.key}`, undefined, undefined],
      ],
    );
    assert.match(p.items[2]?.key ?? '', /^[0-9a-f]{12}$/);
  });

  it('variants: N makes N takes with distinct keys, names and seeds; take 1 keeps the key and name', async () => {
    const p = await plan(`${HEAD}  variants: 3\nitems:\n  - id: shoe\n    prompt: a red shoe\n`);
    assert.deepEqual(
      p.items.map((i) => [i.key, i.outputName, i.take, i.index]),
      [
        ['shoe', '001-shoe', 1, 1],
        ['shoe~t2', '001-shoe-t2', 2, 1],
        ['shoe~t3', '001-shoe-t3', 3, 1],
      ],
    );
    const seeds = p.items.map((i) => i.request.seed);
    assert.equal(new Set(seeds).size, 3);
    assert.deepEqual(seeds, [takeSeed('shoe', 1), takeSeed('shoe', 2), takeSeed('shoe', 3)]);
    // The same job planned again sends the same seeds.
    const again = await plan(`${HEAD}  variants: 3\nitems:\n  - id: shoe\n    prompt: a red shoe\n`);
    assert.deepEqual(
      again.items.map((i) => i.request.seed),
      seeds,
    );
  });

  it('{take} in output.name names each take, and per model and per item variants win in that order', async () => {
    const yaml =
      `${HEAD}  variants: 2\nmodels:\n  veo-3.1-fast-generate-001:\n    protocol: openai\n    variants: 3\n` +
      `output:\n  name: "{id}-take{take}"\nitems:\n  - id: a\n    prompt: one\n  - id: b\n    prompt: two\n    model: veo-3.1-fast-generate-001\n` +
      `  - id: c\n    prompt: three\n    model: veo-3.1-fast-generate-001\n    variants: 1\n`;
    const p = await plan(yaml);
    assert.deepEqual(
      p.items.map((i) => i.outputName),
      ['a-take1', 'a-take2', 'b-take1', 'b-take2', 'b-take3', 'c-take1'],
    );
  });

  it('a given seed is take 1 seed, later takes count up from it; a seed alone seeds the only take', async () => {
    const p = await plan(
      `${HEAD}  variants: 2\n  seed: 42\nitems:\n  - id: a\n    prompt: one\n  - id: b\n    prompt: two\n    seed: "7"\n`,
    );
    assert.deepEqual(
      p.items.map((i) => [i.key, i.request.seed]),
      [
        ['a', 42],
        ['a~t2', 43],
        ['b', 7],
        ['b~t2', 8],
      ],
    );
    const single = await plan(`${HEAD}items:\n  - id: a\n    prompt: one\n    seed: 5\n`);
    assert.equal(single.items[0]?.request.seed, 5);
    assert.equal(single.items[0]?.take, undefined);
    assert.equal(single.items[0]?.key, 'a');
  });

  it('takes of an item without an id share its hash key, suffixed, and name their source when a matrix splits it', async () => {
    const p = await plan(`${HEAD}  variants: 2\nmatrix:\n  ratio: ["16:9", "9:16"]\nitems:\n  - prompt: a hat\n`);
    assert.equal(p.items.length, 4);
    assert.equal(p.items[1]?.key, `${p.items[0]?.key}~t2`);
    assert.equal(new Set(p.items.map((i) => i.group)).size, 1);
    assert.ok(p.items[0]?.group);
  });

  it('{take} is refused in the prompt, where takes must be alike', async () => {
    const errors = await errorsOf(`${HEAD}items:\n  - id: a\n    prompt: one {take}\n`);
    assert.equal(errors.length, 1);
    assert.match(
      errors[0] ?? '',
      /^8:13: items\[0\]\.prompt: placeholder \{take\} cannot be used in prompt: the takes of an item share it/,
    );
  });

  for (const [value, shown] of [
    ['0', '0'],
    ['-1', '-1'],
    ['"x"', '"x"'],
    ['101', '101'],
    ['2.5', '2.5'],
  ] as const) {
    it(`variants: ${value} is refused naming the line and what is allowed`, async () => {
      const errors = await errorsOf(`${HEAD}items:\n  - id: a\n    prompt: one\n    variants: ${value}\n`);
      assert.deepEqual(errors, [`9:15: items[0].variants must be a whole number from 1 to 100, got ${shown}`]);
    });
  }

  it('too many takes in all are refused at variants', async () => {
    const errors = await errorsOf(
      `${HEAD}  variants: 100\nmatrix:\n  n: [${Array.from({ length: 2001 }, (_, i) => i).join(', ')}]\nitems:\n  - id: a\n    prompt: p {n}\n`,
    );
    assert.equal(errors.length, 1);
    assert.match(
      errors[0] ?? '',
      /^6:13: defaults\.variants: variants: 100 takes each make the job more than 200000 renders; at most 200000 are allowed/,
    );
  });

  it('a bad seed is refused', async () => {
    const errors = await errorsOf(`${HEAD}items:\n  - id: a\n    prompt: one\n    seed: -3\n`);
    assert.deepEqual(errors, ['9:11: items[0].seed must be a whole number from 0 to 2147483647, got -3']);
  });
});

describe('redo takes', () => {
  it('a redo plan holds only the asked takes, numbered past the others, keys and names beside them', async () => {
    const dir = tempJobDir({
      'job.yaml': `${HEAD}  variants: 2\nitems:\n  - id: a\n    prompt: one\n  - id: b\n    prompt: two\n`,
    });
    const r = await loadJobFile(join(dir, 'job.yaml'), {
      runDate: RUN_DATE,
      redo: [
        { of: 'a~t2', take: 3 },
        { of: 'b', take: 4 },
      ],
    });
    assert.ok(r.ok);
    assert.deepEqual(
      r.plan.items.map((i) => [i.key, i.outputName, i.take, i.redoOf, i.request.seed]),
      [
        ['a~t3', '001-a-t3', 3, 'a~t2', takeSeed('a', 3)],
        ['b~t4', '002-b-t4', 4, 'b', takeSeed('b', 4)],
      ],
    );
  });

  it('a redo of a job without variants makes take 2 beside take 1', async () => {
    const dir = tempJobDir({ 'job.yaml': `${HEAD}items:\n  - id: a\n    prompt: one\n` });
    const r = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE, redo: [{ of: 'a', take: 2 }] });
    assert.ok(r.ok);
    assert.deepEqual(
      r.plan.items.map((i) => [i.key, i.outputName, i.take]),
      [['a~t2', '001-a-t2', 2]],
    );
  });

  it('take keys parse back', () => {
    assert.equal(takeKey('a.16-9', 1), 'a.16-9');
    assert.equal(takeKey('a.16-9', 12), 'a.16-9~t12');
    assert.equal(baseKeyOf('a.16-9~t12'), 'a.16-9');
    assert.equal(takeOfKey('a.16-9~t12'), 12);
    assert.equal(takeOfKey('a.t2'), 1);
  });
});
