// Expansion: precedence, matrix, items_from, placeholders, keys, output names, defaults.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { errorsOf, HEAD, load, plan, RUN_DATE } from './helpers';

const GW = 'name: spring\ngateway:\n  base_urls: [http://127.0.0.1:8787]\n';

describe('defaults', () => {
  it('fills every documented default', async () => {
    const p = await plan(`${HEAD}items:\n  - prompt: hi\n`);
    assert.equal(p.job, 't');
    assert.deepEqual(p.gateway, {
      baseUrls: ['http://127.0.0.1:8787'],
      apiKeyEnv: 'GATEWAY_API_KEY',
      requestTimeoutMs: 30_000,
      allowPrivateTargets: undefined,
    });
    assert.deepEqual(p.concurrency, { maxInFlight: 20, createsPerMinute: undefined });
    assert.deepEqual(p.polling, { initialMs: 10_000, maxMs: 60_000, timeoutMs: 7_200_000 });
    assert.deepEqual(p.retries, { create: 'safe', download: 5, stopAfterFailures: 5 });
    assert.equal(p.output.storage, 'local');
    assert.equal(p.runDate, RUN_DATE);
    assert.equal(p.schedule, undefined);
    assert.equal(p.enhance, undefined);
    const item = p.items[0];
    assert.ok(item);
    assert.equal(item.request.protocol, 'general');
    assert.equal(item.index, 1);
    assert.match(item.key, /^[0-9a-f]{12}$/);
    assert.equal(item.outputName, `001-${item.key}`);
    assert.equal(item.id, undefined);
  });

  it('resolves output.dir against the job file directory, with {job}', async () => {
    const r = await load(`${HEAD}items:\n  - prompt: hi\n`);
    assert.ok(r.ok);
    assert.equal(r.plan.output.dir, join(r.dir, 'out', 't'));
    assert.equal(r.plan.jobFile, join(r.dir, 'job.yaml'));
  });

  it('s3 defaults and prefix placeholders', async () => {
    const p = await plan(
      `${HEAD}vars:\n  team: video\nitems:\n  - prompt: hi\noutput:\n  storage: s3\n  s3:\n    bucket: renders\n    prefix: "/{team}/{job}/{date}"\n`,
    );
    assert.deepEqual(p.output, {
      storage: 's3',
      maxBytes: 20 * 2 ** 30,
      s3: { bucket: 'renders', prefix: 'video/t/2025-03-14/', undatedPrefix: 'video/t/', region: 'us-east-1', forcePathStyle: false },
    });
  });

  it('output.max_bytes: 20 GiB by default, sizes with units or a number of bytes, never zero', async () => {
    const at = async (v: string) => (await plan(`${HEAD}items:\n  - prompt: hi\noutput:\n  max_bytes: ${v}\n`)).output.maxBytes;
    assert.equal((await plan(`${HEAD}items:\n  - prompt: hi\n`)).output.maxBytes, 20 * 2 ** 30);
    assert.equal(await at('500MB'), 500_000_000);
    assert.equal(await at('2GiB'), 2 * 2 ** 30);
    assert.equal(await at('1048576'), 1_048_576);
    const bad = await errorsOf(`${HEAD}items:\n  - prompt: hi\noutput:\n  max_bytes: 0\n`);
    assert.match(bad[0] ?? '', /output\.max_bytes must be a size such as "20GiB", "500MB" or a number of bytes, got 0/);
  });

  it('schedule defaults: UTC, skip, and a description in words', async () => {
    const p = await plan(`${HEAD}items:\n  - prompt: hi\nschedule:\n  cron: "30 6 * * 1-5"\n`);
    assert.deepEqual(p.schedule, {
      cron: '30 6 * * 1-5',
      timezone: 'UTC',
      overlap: 'skip',
      description: 'at 06:30 on Monday through Friday (UTC)',
    });
  });
});

describe('precedence: defaults -> models.<m> -> item -> matrix', () => {
  const yaml = `${GW}defaults:
  model: seedance-1-0-pro-250528
  seconds: "5"
  resolution: 480p
  ratio: "4:3"
  size: 640x480
  watermark: true
models:
  seedance-1-0-pro-250528:
    resolution: 720p
  veo-3.1-fast-generate-001:
    protocol: openai
    seconds: 8
items:
  - id: a
    prompt: first
  - id: b
    prompt: second
    resolution: 1080p
    watermark: false
  - id: c
    prompt: third
    model: veo-3.1-fast-generate-001
  - id: d
    prompt: fourth
    model: veo-3.1-fast-generate-001
    protocol: general
    ratio: "1:1"
`;
  it('each level wins over the one before', async () => {
    const p = await plan(yaml);
    const [a, b, c, d] = p.items.map((i) => i.request);
    assert.deepEqual(a, {
      model: 'seedance-1-0-pro-250528',
      protocol: 'general',
      prompt: 'first',
      references: [],
      seconds: '5',
      resolution: '720p',
      ratio: '4:3',
      watermark: true,
    });
    assert.deepEqual(b, {
      model: 'seedance-1-0-pro-250528',
      protocol: 'general',
      prompt: 'second',
      references: [],
      seconds: '5',
      resolution: '1080p',
      ratio: '4:3',
      watermark: false,
    });
    // protocol from models.<m>; general-only defaults are left out, openai-only size reaches it; bare 8 -> "8".
    assert.deepEqual(c, {
      model: 'veo-3.1-fast-generate-001',
      protocol: 'openai',
      prompt: 'third',
      references: [],
      seconds: '8',
      size: '640x480',
      watermark: true,
    });
    // item protocol beats the model's.
    assert.equal(d?.protocol, 'general');
    assert.equal(d?.ratio, '1:1');
    assert.equal(d?.size, undefined);
    assert.deepEqual(p.warnings, []);
  });

  it('a defaults-level parameter no item can use is a warning, not an error', async () => {
    const p = await plan(`${HEAD}  size: 1280x720\nitems:\n  - prompt: hi\n`);
    assert.equal(p.items[0]?.request.size, undefined);
    assert.equal(p.warnings.length, 1);
    assert.match(p.warnings[0] ?? '', /job\.yaml:6:9: warning: defaults\.size is not used by any item/);
  });

  it('trailing slash and /v1 are normalised away with a warning; model names are untouched', async () => {
    const p = await plan(
      'name: t\ngateway:\n  base_urls:\n    - https://gw.example.com/v1/\n    - http://127.0.0.1:8788/\ndefaults:\n  model: Seedance-1-0-PRO-250528\nitems:\n  - prompt: hi\n',
    );
    assert.deepEqual(p.gateway.baseUrls, ['https://gw.example.com', 'http://127.0.0.1:8788']);
    assert.equal(p.warnings.length, 2);
    assert.match(
      p.warnings[0] ?? '',
      /:4:7: warning: gateway\.base_urls\[0\]: base address "https:\/\/gw\.example\.com\/v1\/" normalised to "https:\/\/gw\.example\.com"/,
    );
    assert.equal(p.items[0]?.request.model, 'Seedance-1-0-PRO-250528');
  });
});

describe('matrix', () => {
  it('renders every item once per combination, item by item, with matrix keys as params and placeholders', async () => {
    const p = await plan(
      `${HEAD}matrix:\n  ratio: ["16:9", "9:16"]\n  mood: [calm, 3]\nitems:\n  - id: sea\n    prompt: a {mood} sea\n    ratio: "1:1"\n  - prompt: a {mood} forest\noutput:\n  name: "{index:03}-{id}-{mood}"\n`,
    );
    assert.equal(p.items.length, 8);
    assert.deepEqual(
      p.items.map((i) => [i.index, i.request.ratio, i.request.prompt]),
      [
        [1, '16:9', 'a calm sea'],
        [2, '16:9', 'a 3 sea'],
        [3, '9:16', 'a calm sea'],
        [4, '9:16', 'a 3 sea'],
        [5, '16:9', 'a calm forest'],
        [6, '16:9', 'a 3 forest'],
        [7, '9:16', 'a calm forest'],
        [8, '9:16', 'a 3 forest'],
      ],
    );
    assert.deepEqual(
      p.items.slice(0, 4).map((i) => i.key),
      ['sea.16-9.calm', 'sea.16-9.3', 'sea.9-16.calm', 'sea.9-16.3'],
    );
    assert.equal(p.items[0]?.outputName, '001-sea-calm');
    assert.deepEqual(p.items[0]?.vars, { ratio: '16:9', mood: 'calm' });
    assert.equal(new Set(p.items.map((i) => i.key)).size, 8);
  });

  it('a matrix parameter the protocol lacks is left out for that item (once per remaining combination)', async () => {
    const p = await plan(
      `${HEAD}models:\n  veo-3.1-fast-generate-001:\n    protocol: openai\nmatrix:\n  ratio: ["16:9", "9:16"]\nitems:\n  - prompt: one\n  - prompt: two\n    model: veo-3.1-fast-generate-001\n`,
    );
    assert.deepEqual(
      p.items.map((i) => [i.index, i.request.model, i.request.ratio]),
      [
        [1, 'seedance-1-0-pro-250528', '16:9'],
        [2, 'seedance-1-0-pro-250528', '9:16'],
        [3, 'veo-3.1-fast-generate-001', undefined],
      ],
    );
    assert.equal(p.warnings.length, 1);
  });

  it('a matrix of models', async () => {
    const p = await plan(
      `${GW}models:\n  veo-3.1-fast-generate-001:\n    protocol: openai\nmatrix:\n  model: [seedance-1-0-pro-250528, veo-3.1-fast-generate-001]\nitems:\n  - prompt: hi {model}\n`,
    );
    assert.deepEqual(
      p.items.map((i) => [i.request.model, i.request.protocol, i.request.prompt]),
      [
        ['seedance-1-0-pro-250528', 'general', 'hi seedance-1-0-pro-250528'],
        ['veo-3.1-fast-generate-001', 'openai', 'hi veo-3.1-fast-generate-001'],
      ],
    );
  });
});

describe('items_from', () => {
  const head = `${HEAD}vars:\n  style: noir\n`;
  it('csv: header names item keys, other columns are placeholders, RFC 4180 quoting, blank lines skipped', async () => {
    const csv = 'id,prompt,seconds,place\r\nh1,"At {place}, ""quoted"", {style}",8,the harbor\r\n\r\nh2,"two\nlines",,"a, b"\r\n';
    const p = await plan(`${head}items:\n  - prompt: first\nitems_from:\n  file: p.csv\n`, { 'p.csv': csv });
    assert.deepEqual(
      p.items.map((i) => [i.index, i.id, i.request.prompt, i.request.seconds]),
      [
        [1, undefined, 'first', undefined],
        [2, 'h1', 'At the harbor, "quoted", noir', '8'],
        [3, 'h2', 'two\nlines', undefined],
      ],
    );
    assert.deepEqual(p.items[2]?.vars, { place: 'a, b' });
  });

  it('jsonl: one object a line, with references', async () => {
    const jsonl = '{"prompt": "a {x}", "x": 1}\n\n{"id": "j2", "prompt": "b", "references": [{"image": "./assets/logo.png"}]}\n';
    const r = await load(`${head}items_from:\n  file: p.jsonl\n`, { 'p.jsonl': jsonl });
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    assert.deepEqual(
      r.plan.items.map((i) => i.request.prompt),
      ['a 1', 'b'],
    );
    assert.deepEqual(r.plan.items[1]?.request.references, [
      { kind: 'image', role: 'reference_image', source: join(r.dir, 'assets/logo.png'), local: true },
    ]);
  });

  it('txt: one prompt a line, blank lines skipped', async () => {
    const p = await plan(`${head}items_from:\n  file: p.txt\n`, { 'p.txt': 'first {style}\n\n  second  \n' });
    assert.deepEqual(
      p.items.map((i) => i.request.prompt),
      ['first noir', 'second'],
    );
  });

  it('matrix applies to rows too', async () => {
    const p = await plan(`${head}matrix:\n  ratio: ["16:9", "1:1"]\nitems_from:\n  file: p.txt\n`, { 'p.txt': 'a\nb\n' });
    assert.equal(p.items.length, 4);
  });
});

describe('placeholders', () => {
  it('fills {job} {date} {index} {index:03} {model} {id} and vars; {{ }} are literal braces; JSON-ish braces stay', async () => {
    const p = await plan(
      `${HEAD}vars:\n  product: shoe\n  n: 7\nitems:\n  - id: x1\n    prompt: '{job} {date} {index} {index:03} {model} {id} {product} {n:04} {{product}} { "a": 1 }'\noutput:\n  name: "{date}/{index:05}-{id}"\n`,
    );
    assert.equal(p.items[0]?.request.prompt, 't 2025-03-14 1 001 seedance-1-0-pro-250528 x1 shoe 0007 {product} { "a": 1 }');
    assert.equal(p.items[0]?.outputName, '2025-03-14/00001-x1');
  });

  it('the default name uses the key when there is no id', async () => {
    const p = await plan(`${HEAD}items:\n  - prompt: hi\n  - id: named\n    prompt: hi\n`);
    assert.equal(p.items[0]?.outputName, `001-${p.items[0]?.key ?? ''}`);
    assert.equal(p.items[1]?.outputName, '002-named');
  });

  it('placeholders in reference paths', async () => {
    const r = await load(`${HEAD}vars:\n  asset: logo\nitems:\n  - prompt: hi\n    references:\n      - image: ./assets/{asset}.png\n`);
    assert.ok(r.ok);
    assert.equal(r.plan.items[0]?.request.references[0]?.source, join(r.dir, 'assets/logo.png'));
  });
});

describe('item keys', () => {
  const items = [
    '  - prompt: alpha\n',
    '  - prompt: beta\n    seconds: "8"\n',
    '  - prompt: gamma\n    references:\n      - image: https://x.example/g.png\n',
  ];
  it('do not change when items are reordered', async () => {
    const p1 = await plan(`${HEAD}items:\n${items.join('')}`);
    const p2 = await plan(`${HEAD}items:\n${[...items].reverse().join('')}`);
    const byPrompt = (p: typeof p1) => new Map(p.items.map((i) => [i.request.prompt, i.key]));
    assert.deepEqual(byPrompt(p1), byPrompt(p2));
    assert.deepEqual(
      p1.items.map((i) => i.index),
      [1, 2, 3],
    );
  });

  it('change when a prompt, a parameter, a reference or the model changes', async () => {
    const base = (await plan(`${HEAD}items:\n  - prompt: alpha\n`)).items[0]?.key;
    const variants = [
      `${HEAD}items:\n  - prompt: alpha!\n`,
      `${HEAD}items:\n  - prompt: alpha\n    seconds: "6"\n`,
      `${HEAD}items:\n  - prompt: alpha\n    references:\n      - image: https://x.example/a.png\n`,
      `${HEAD}items:\n  - prompt: alpha\n    model: other-model\n`,
    ];
    for (const v of variants) assert.notEqual((await plan(v)).items[0]?.key, base);
  });

  it('do not change with comments, key order or where a value is set (defaults vs item)', async () => {
    const a = (await plan(`${HEAD}  seconds: "5"\nitems:\n  - prompt: alpha\n`)).items[0]?.key;
    const b = (await plan(`${HEAD}items:\n  # a comment\n  - seconds: 5\n    prompt: alpha\n`)).items[0]?.key;
    assert.equal(a, b);
  });

  it('prompts are hashed after vars: editing a var used by the prompt changes the key', async () => {
    const k1 = (await plan(`${HEAD}vars:\n  p: shoe\nitems:\n  - prompt: a {p}\n`)).items[0]?.key;
    const k2 = (await plan(`${HEAD}vars:\n  p: boot\nitems:\n  - prompt: a {p}\n`)).items[0]?.key;
    const k3 = (await plan(`${HEAD}items:\n  - prompt: a shoe\n`)).items[0]?.key;
    assert.notEqual(k1, k2);
    assert.equal(k1, k3);
  });

  it('a given id is the key', async () => {
    const p = await plan(`${HEAD}items:\n  - id: Hero_1.v2\n    prompt: x\n`);
    assert.equal(p.items[0]?.key, 'Hero_1.v2');
    assert.equal(p.items[0]?.id, 'Hero_1.v2');
  });
});

describe('references', () => {
  it('role defaults to reference_<kind>; several of one kind and mixes are kept in order', async () => {
    const p = await plan(
      `${HEAD}items:\n  - prompt: hi\n    references:\n      - image: https://x.example/1.png\n      - image: data:image/png;base64,AAAA\n      - audio: https://x.example/a.mp3\n        role: reference_audio\n      - video: https://x.example/v.mp4\n`,
    );
    assert.deepEqual(
      p.items[0]?.request.references.map((r) => [r.kind, r.role, r.local]),
      [
        ['image', 'reference_image', false],
        ['image', 'reference_image', false],
        ['audio', 'reference_audio', false],
        ['video', 'reference_video', false],
      ],
    );
  });

  it('openai with several images warns that only the first is uploaded', async () => {
    const p = await plan(
      `${HEAD}items:\n  - prompt: hi\n    protocol: openai\n    references:\n      - image: https://x.example/1.png\n      - image: https://x.example/2.png\n`,
    );
    assert.equal(p.warnings.length, 1);
    assert.match(p.warnings[0] ?? '', /only the first reference image/);
  });
});

describe('yaml features', () => {
  it('anchors, aliases and merge keys work', async () => {
    const q = await plan(`${HEAD}items:\n  - &first\n    prompt: hi\n    seconds: "9"\n  - <<: *first\n    prompt: again\n`);
    assert.deepEqual(
      q.items.map((i) => [i.request.prompt, i.request.seconds]),
      [
        ['hi', '9'],
        ['again', '9'],
      ],
    );
  });
});
