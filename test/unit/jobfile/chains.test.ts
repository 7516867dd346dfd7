// Chains of shots in the job file (docs/chains.md): needs resolved to item keys, the plan in
// dependency order, keys that follow what they depend on, and every refusal at its line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadJobFile } from '../../../jobfile';
import { errorsOf, HEAD, plan, tempJobDir } from './helpers';
import { join } from 'node:path';

const SEEDANCE2 = `name: t
gateway:
  base_urls: [http://127.0.0.1:8787]
defaults:
  model: doubao-seedance-2-0-260128
  seconds: "5"
`;

describe('chains: needs and order', () => {
  it('a last frame, a frame at a time, a whole video and after become needs, in dependency order', async () => {
    const p = await plan(`${SEEDANCE2}items:
  - id: extend-3
    prompt: Continue the sweep
    references:
      - video: { output_of: shot-3 }
    after: [shot-2]
  - id: shot-3
    prompt: The lamp turns
    references:
      - image: { frame_of: shot-2, at: 4.5s }
        role: reference_image
  - id: shot-2
    prompt: He opens the door
    references:
      - image: { last_frame_of: shot-1 }
  - id: shot-1
    prompt: He climbs the stairs
    variants: 2
`);
    assert.deepEqual(
      p.items.map((i) => i.key),
      ['shot-1', 'shot-1~t2', 'shot-2', 'shot-3', 'extend-3'],
    );
    assert.deepEqual(
      p.items.map((i) => i.index),
      [1, 1, 2, 3, 4],
    );
    const byKey = new Map(p.items.map((i) => [i.key, i]));
    assert.deepEqual(byKey.get('shot-2')?.needs, [{ key: 'shot-1', use: 'last_frame', role: 'first_frame' }]);
    assert.deepEqual(byKey.get('shot-3')?.needs, [{ key: 'shot-2', use: 'frame', at: 4.5, role: 'reference_image' }]);
    assert.deepEqual(byKey.get('extend-3')?.needs, [
      { key: 'shot-3', use: 'video' },
      { key: 'shot-2', use: 'after' },
    ]);
    // Needs are not references of the request: the workflow resolves them into stored frames.
    assert.deepEqual(byKey.get('shot-2')?.request.references, []);
    assert.equal(byKey.get('shot-1')?.neededBy, true);
    assert.equal(byKey.get('shot-1~t2')?.neededBy, undefined);
    assert.equal(byKey.get('extend-3')?.neededBy, undefined);
    // Every take of an item needed for its last frame asks for it (Seedance returns it); no other item does.
    assert.equal(byKey.get('shot-1')?.request.returnLastFrame, true);
    assert.equal(byKey.get('shot-1~t2')?.request.returnLastFrame, true);
    assert.equal(byKey.get('shot-2')?.request.returnLastFrame, undefined);
    assert.equal(byKey.get('shot-3')?.request.returnLastFrame, undefined);
  });

  it('a redo plans a new take with the same request as the full plan gives it (return_last_frame too)', async () => {
    const yaml = `${SEEDANCE2}items:
  - id: shot-1
    prompt: He climbs the stairs
    variants: 2
  - id: shot-2
    prompt: He opens the door
    references:
      - image: { last_frame_of: shot-1 }
`;
    const dir = tempJobDir({ 'job.yaml': yaml });
    const full = await loadJobFile(join(dir, 'job.yaml'), { runDate: '2025-01-01' });
    const redo = await loadJobFile(join(dir, 'job.yaml'), { runDate: '2025-01-01', redo: [{ of: 'shot-1~t2', take: 3 }] });
    assert.ok(full.ok && redo.ok);
    assert.deepEqual(
      redo.plan.items.map((i) => i.key),
      ['shot-1~t3'],
    );
    assert.equal(redo.plan.items[0]?.request.returnLastFrame, true, 'shot-2 is not in this plan, but it needs the last frame of shot-1');
  });

  it('a job without chains keeps its file order and its items have no needs', async () => {
    const p = await plan(`${HEAD}items:
  - id: b
    prompt: B
  - id: a
    prompt: A
`);
    assert.deepEqual(
      p.items.map((i) => [i.key, i.needs, i.neededBy]),
      [
        ['b', undefined, undefined],
        ['a', undefined, undefined],
      ],
    );
    assert.equal(p.assemble, undefined);
  });

  it('with a matrix, a need resolves within the same combination', async () => {
    const p = await plan(`${SEEDANCE2}matrix:
  ratio: ["16:9", "9:16"]
items:
  - id: a
    prompt: A
  - id: b
    prompt: B
    references:
      - image: { last_frame_of: a }
`);
    assert.deepEqual(
      p.items.map((i) => [i.key, i.needs?.[0]?.key]),
      [
        ['a.16-9', undefined],
        ['a.9-16', undefined],
        ['b.16-9', 'a.16-9'],
        ['b.9-16', 'a.9-16'],
      ],
    );
  });

  it('once picks exist, a need resolves to the kept take', async () => {
    const dir = tempJobDir({
      'job.yaml': `${SEEDANCE2}items:
  - id: a
    prompt: A
    variants: 3
  - id: b
    prompt: B
    references:
      - image: { last_frame_of: a }
assemble:
  - name: film
    items: [a, b]
`,
    });
    const r = await loadJobFile(join(dir, 'job.yaml'), { runDate: '2025-01-01', keptTakes: new Map([['a', 'a~t3']]) });
    assert.ok(r.ok);
    assert.deepEqual(r.plan.items.find((i) => i.key === 'b')?.needs, [{ key: 'a~t3', use: 'last_frame', role: 'first_frame' }]);
    assert.equal(r.plan.items.find((i) => i.key === 'a~t3')?.neededBy, true);
    assert.deepEqual(r.plan.assemble, [{ name: 'film', keys: ['a~t3', 'b'] }]);
  });
});

describe('chains: keys', () => {
  const job = (firstPrompt: string, order: 'ab' | 'ba' = 'ab', seconds = '5') => {
    const a = `  - id: a
    prompt: ${firstPrompt}
    seconds: "${seconds}"
`;
    const b = `  - prompt: The next shot
    references:
      - image: { last_frame_of: a }
  - prompt: An unrelated shot
`;
    return `${SEEDANCE2}items:\n${order === 'ab' ? a + b : b + a}`;
  };
  const keys = async (yaml: string) => (await plan(yaml)).items.map((i) => i.key).filter((k) => k !== 'a');

  it("a dependent's key changes when what it needs changes, and only then", async () => {
    const [next, other] = await keys(job('The first shot'));
    const [nextEdited, otherEdited] = await keys(job('The first shot, edited'));
    assert.notEqual(nextEdited, next, 'the prompt of the needed item changed: the dependent is another request');
    assert.equal(otherEdited, other, 'an item that needs nothing keeps its key');
    const [nextLonger] = await keys(job('The first shot', 'ab', '8'));
    assert.notEqual(nextLonger, next);
    const reordered = await keys(job('The first shot', 'ba'));
    assert.deepEqual(new Set(reordered), new Set([next, other]), 'reordering the file changes no key');
  });

  it('the key of an item without needs is what it always was (the value main gave before chains)', async () => {
    const p = await plan(`${HEAD}items:
  - prompt: Same as ever
    references:
      - image: https://cdn.example.com/a.png
        role: reference_image
`);
    assert.equal(p.items[0]?.key, 'a8b2b8586418');
  });
});

describe('chains: refusals at file:line', () => {
  it('an unknown id, in a reference, after and assemble', async () => {
    assert.deepEqual(
      await errorsOf(`${SEEDANCE2}items:
  - id: a
    prompt: A
    references:
      - image: { last_frame_of: shot-9 }
    after: [nope]
assemble:
  - name: film
    items: [a, ghost]
`),
      [
        '11:33: items[0].references[0].image.last_frame_of: no item has the id "shot-9"; ids of the job: a',
        '12:13: items[0].after[0]: no item has the id "nope"; ids of the job: a',
        '15:16: assemble[0].items[1]: no item has the id "ghost"; ids of the job: a',
      ],
    );
  });

  it('a cycle, naming its ids in order', async () => {
    const errors = await errorsOf(`${SEEDANCE2}items:
  - id: a
    prompt: A
    after: [c]
  - id: b
    prompt: B
    references:
      - image: { last_frame_of: a }
  - id: c
    prompt: C
    references:
      - video: { output_of: b }
`);
    assert.deepEqual(errors, ['10:13: items[0].after[0]: a cycle: a -> c -> b -> a; an item cannot wait, even through others, on itself']);
    assert.match((await errorsOf(`${SEEDANCE2}items:\n  - id: a\n    prompt: A\n    after: [a]\n`))[0] ?? '', /a cycle: a -> a/);
  });

  it('a frame role the model does not take, from its settings or its family', async () => {
    const errors = await errorsOf(`${SEEDANCE2}models:
  doubao-seedance-2-0-260128:
    frames: [first_frame]
  veo-3.1-fast-generate-preview:
    protocol: openai
items:
  - id: a
    prompt: A
    references:
      - image: https://cdn.example.com/end.png
        role: last_frame
  - id: b
    prompt: B
    model: veo-3.1-fast-generate-preview
    seconds: "8"
    references:
      - image: { last_frame_of: a }
        role: last_frame
`);
    assert.deepEqual(errors, [
      '16:16: items[0].references[0].image: model doubao-seedance-2-0-260128 does not take a last_frame (frames it takes: first_frame; models.doubao-seedance-2-0-260128.frames)',
      '23:16: items[1].references[0].image: the openai protocol sends one image, as input_reference (the first frame); it cannot carry a last_frame (model veo-3.1-fast-generate-preview)',
    ]);
  });

  it('an asset kind the model does not take, for a video of another item', async () => {
    const errors = await errorsOf(`${SEEDANCE2}models:
  doubao-seedance-2-0-260128:
    assets: [image]
items:
  - id: a
    prompt: A
  - id: b
    prompt: B
    references:
      - video: { output_of: a }
`);
    assert.deepEqual(errors, [
      '16:16: items[1].references[0].video: model doubao-seedance-2-0-260128 does not accept video references (models.doubao-seedance-2-0-260128.assets: image)',
    ]);
  });

  it('frames mixed with reference media, for Seedance by default and not for a model that allows it', async () => {
    const yaml = (models: string) => `${SEEDANCE2}${models}items:
  - id: a
    prompt: A
  - id: b
    prompt: B
    references:
      - image: { last_frame_of: a }
      - audio: https://cdn.example.com/beat.mp3
`;
    assert.deepEqual(await errorsOf(yaml('')), [
      '13:16: items[1].references[0].image: model doubao-seedance-2-0-260128 refuses first/last frames and reference media (reference_audio at references[1].audio) in one request (the default for Seedance 2.x; set models.doubao-seedance-2-0-260128.mix_frames_and_references to change it); keep the frames or the reference media',
    ]);
    assert.deepEqual(await errorsOf(yaml('models:\n  doubao-seedance-2-0-260128:\n    mix_frames_and_references: true\n')), []);
  });

  it('the openai protocol: a first frame with another image cannot be carried', async () => {
    const errors = await errorsOf(`${SEEDANCE2}items:
  - id: a
    prompt: A
  - id: b
    prompt: B
    model: veo-3.1-fast-generate-preview
    protocol: openai
    seconds: "8"
    references:
      - image: { last_frame_of: a }
      - image: https://cdn.example.com/style.png
`);
    assert.equal(errors.length, 1);
    assert.match(
      errors[0] ?? '',
      /^17:\d+: .*openai protocol sends one image, as input_reference: with a first_frame it cannot carry another image/,
    );
  });

  it('a frame past the end of the needed video, and a crossfade longer than its clips', async () => {
    const errors = await errorsOf(`${SEEDANCE2}items:
  - id: a
    prompt: A
  - id: b
    prompt: B
    references:
      - image: { frame_of: a, at: 5.5s }
assemble:
  - name: film
    items: [a, b]
    crossfade: 3s
`);
    assert.deepEqual(errors, [
      `13:35: items[1].references[0].image.at 5.5s is not in a's video: it is 5s long (seconds: "5"); use a time below 5s, or last_frame_of`,
    ]);
    // Each clip fades at every end it shares: 3 s fits a 5 s clip at one end, not at both.
    const fade = (items: string) =>
      errorsOf(`${SEEDANCE2}items:
  - id: a
    prompt: A
  - id: b
    prompt: B
  - id: c
    prompt: C
assemble:
  - name: film
    items: ${items}
    crossfade: 3s
`);
    assert.deepEqual(await fade('[a, b]'), []);
    assert.deepEqual(await fade('[a, b, c]'), [
      '17:16: assemble[0].crossfade 3s is too long for a 5s clip (b): a clip must be longer than its crossfades (one at each end it shares)',
    ]);
  });

  it('a bad form is refused by the schema, with what is allowed', async () => {
    const errors = await errorsOf(`${SEEDANCE2}items:
  - id: a
    prompt: A
  - id: b
    prompt: B
    references:
      - image: { frame_of: a }
      - video: { last_frame_of: a }
      - image: { last_frame_of: a, frame_of: a, at: 1s }
`);
    assert.deepEqual(errors, [
      '13:16: items[1].references[0].image: frame_of needs at: the time of the frame, such as at: 4.5s',
      '14:16: items[1].references[1].video must be an http(s) URL, a data: URL, a local path or {output_of: ID}, got a map',
      '15:16: items[1].references[2].image takes one of {last_frame_of: ID} or {frame_of: ID, at: 4.5s}',
    ]);
  });

  it('duplicate assembly names, and a need in defaults', async () => {
    const errors = await errorsOf(`${SEEDANCE2}  references:
    - image: { last_frame_of: a }
items:
  - id: a
    prompt: A
assemble:
  - name: film
    items: [a]
  - name: film
    items: [a]
`);
    assert.deepEqual(errors, [
      '8:14: defaults.references[0].image: defaults.references cannot name an item (every item, that one too, would get it): put it on the items that need it',
      '15:11: assemble[1].name: duplicate assembly name "film": assemble[0] has it too',
    ]);
  });

  it('role first_frame only on images; an unknown model takes frames with anything', async () => {
    assert.deepEqual(
      await errorsOf(`${HEAD}items:
  - prompt: P
    references:
      - video: https://cdn.example.com/a.mp4
        role: first_frame
`),
      ['10:15: items[0].references[0].role of a video reference must be reference_video, got "first_frame"'],
    );
    assert.deepEqual(
      await errorsOf(`name: t
gateway:
  base_urls: [http://127.0.0.1:8787]
defaults:
  model: some-new-model
items:
  - id: a
    prompt: A
  - prompt: B
    references:
      - image: { last_frame_of: a }
      - image: https://cdn.example.com/end.png
        role: last_frame
      - audio: https://cdn.example.com/beat.mp3
`),
      [],
    );
  });
});
