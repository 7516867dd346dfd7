// Every example job in jobs/ is valid, starts with the schema comment, and the committed JSON Schema
// is what the zod definitions generate.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadJobFile } from '../../../jobfile';
import { jobJsonSchemaText } from '../../../jobfile/json-schema';

const ROOT = join(__dirname, '..', '..', '..');
const JOBS = join(ROOT, 'jobs');
const SCHEMA_COMMENT = '# yaml-language-server: $schema=../schema/job.schema.json';

const expected: Record<string, { items: number; check?: (p: Awaited<ReturnType<typeof loadJobFile>>) => void }> = {
  'demo.yaml': { items: 3 },
  'references.yaml': { items: 4 },
  'local-references.yaml': { items: 2 },
  'openai-protocol.yaml': { items: 3 },
  'enhance.yaml': { items: 2 },
  'matrix.yaml': { items: 8 },
  'from-csv.yaml': { items: 3 },
  's3.yaml': { items: 2 },
  'scheduled.yaml': { items: 1 },
  'pricing.yaml': { items: 4 },
  'film.yaml': { items: 5 },
};

describe('example jobs', () => {
  const files = readdirSync(JOBS)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

  it('there is one per feature', () => {
    for (const name of Object.keys(expected)) assert.ok(files.includes(name), `jobs/${name} is missing`);
  });

  for (const file of files) {
    it(`${file} is valid and points editors at the schema`, async () => {
      const text = readFileSync(join(JOBS, file), 'utf8');
      assert.equal(text.split('\n')[0], SCHEMA_COMMENT);
      const r = await loadJobFile(join(JOBS, file), { runDate: '2025-06-01' });
      assert.ok(r.ok, r.ok ? '' : r.errors.map((e) => `${e.line}:${e.column}: ${e.message}`).join('\n'));
      const want = expected[file];
      if (want) assert.equal(r.plan.items.length, want.items);
      for (const url of r.plan.gateway.baseUrls) assert.match(url, /^http:\/\/127\.0\.0\.1:878[78]$/);
      assert.deepEqual(r.plan.warnings, []);
      // Durations the model documents: veo-3.1-fast-generate-001 renders 4, 8 or 12 seconds.
      for (const item of r.plan.items.filter((i) => i.request.model.startsWith('veo-3.1-fast-generate-001'))) {
        assert.ok(
          ['4', '8', '12'].includes(item.request.seconds ?? '4'),
          `${file}: ${item.key} asks veo-3.1-fast-generate-001 for ${item.request.seconds} s`,
        );
      }
    });
  }

  it('features: local files, both protocols, enhance, s3, schedule', async () => {
    const get = async (f: string) => {
      const r = await loadJobFile(join(JOBS, f), { runDate: '2025-06-01' });
      assert.ok(r.ok);
      return r.plan;
    };
    const local = await get('local-references.yaml');
    assert.ok(local.items.every((i) => i.request.references.every((r) => r.local && r.source === join(JOBS, 'assets', 'logo.png'))));
    const both = await get('openai-protocol.yaml');
    assert.deepEqual(
      both.items.map((i) => [i.request.protocol, i.request.size ?? i.request.ratio]),
      [
        ['general', '16:9'],
        ['openai', '1280x720'],
        ['openai', '720x1280'],
      ],
    );
    assert.equal((await get('enhance.yaml')).enhance?.model, 'claude-sonnet-4-6');
    assert.deepEqual((await get('s3.yaml')).output.s3?.prefix, 's3/2025-06-01/');
    assert.equal((await get('scheduled.yaml')).schedule?.description, 'at 03:00 every day (Europe/Berlin)');
    const refs = await get('references.yaml');
    assert.deepEqual([...new Set(refs.items.flatMap((i) => i.request.references.map((r) => r.kind)))].sort(), ['audio', 'image', 'video']);
  });
});

describe('schema/job.schema.json', () => {
  it('is up to date with the zod definitions (run `npm run schema`)', () => {
    assert.equal(readFileSync(join(ROOT, 'schema', 'job.schema.json'), 'utf8'), jobJsonSchemaText());
  });

  it('the generator --check mode agrees', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'generate-schema.ts'), '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.match(out, /up to date/);
  });

  it('rejects unknown keys and describes the documented defaults', () => {
    const schema = JSON.parse(jobJsonSchemaText()) as {
      additionalProperties: boolean;
      required: string[];
      properties: Record<string, { properties?: Record<string, { default?: unknown }> }>;
    };
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.required.sort(), ['gateway', 'name']);
    assert.equal(schema.properties.polling?.properties?.initial?.default, '10s');
    assert.equal(schema.properties.output?.properties?.name?.default, '{index:03}-{id}');
  });
});

describe('the complete example job file (every key; docs/jobfiles.md)', () => {
  const SPEC = join(ROOT, 'test', 'fixtures', 'jobfile', 'spec-example', 'spring.yaml');
  it('is valid, with every key working as written', async () => {
    const r = await loadJobFile(SPEC, { runDate: '2025-04-01' });
    assert.ok(r.ok, r.ok ? '' : r.errors.map((e) => `${e.line}:${e.column}: ${e.message}`).join('\n'));
    const p = r.plan;
    assert.equal(p.job, 'spring-campaign');
    assert.deepEqual(p.gateway, {
      baseUrls: ['https://gw.example.com', 'https://gw-backup.example.com'],
      apiKeyEnv: 'GATEWAY_API_KEY',
      requestTimeoutMs: 30_000,
      allowPrivateTargets: undefined,
    });
    assert.deepEqual(p.concurrency, { maxInFlight: 20, createsPerMinute: 60 });
    assert.deepEqual(p.schedule, {
      cron: '0 3 * * *',
      timezone: 'Europe/Berlin',
      overlap: 'skip',
      description: 'at 03:00 every day (Europe/Berlin)',
    });
    assert.deepEqual(p.enhance, {
      model: 'claude-sonnet-4-6',
      maxTokens: 400,
      system: 'Rewrite the idea as one cinematic shot description of at most 80 words.',
    });
    // hero x 2 ratios, the veo-3.1-fast-generate-001 item once (ratio is not an openai parameter), 2 CSV rows x 2 ratios.
    assert.deepEqual(
      p.items.map((i) => [i.index, i.key.replace(/^[0-9a-f]{12}$/, '<hash>'), i.request.model, i.request.ratio ?? i.request.size]),
      [
        [1, 'hero.16-9', 'seedance-1-0-pro-250528', '16:9'],
        [2, 'hero.9-16', 'seedance-1-0-pro-250528', '9:16'],
        [3, '<hash>', 'veo-3.1-fast-generate-001', '1280x720'],
        [4, 'row-a.16-9', 'seedance-1-0-pro-250528', '16:9'],
        [5, 'row-a.9-16', 'seedance-1-0-pro-250528', '9:16'],
        [6, 'row-b.16-9', 'seedance-1-0-pro-250528', '16:9'],
        [7, 'row-b.9-16', 'seedance-1-0-pro-250528', '9:16'],
      ],
    );
    assert.equal(p.items[0]?.request.prompt, 'A slow dolly shot of the trail runner shoe on a wet street at night, neon reflections');
    assert.deepEqual(
      p.items[0]?.request.references.map((x) => [x.kind, x.role, x.local]),
      [
        ['image', 'reference_image', false],
        ['image', 'reference_image', true],
        ['audio', 'reference_audio', false],
      ],
    );
    assert.equal(p.items[2]?.request.seconds, '8');
    assert.equal(p.items[6]?.request.prompt, 'She said "go" to the trail runner shoe');
    assert.deepEqual(
      p.warnings.map((w) => w.replace(/^.*spring\.yaml:/, '')),
      [
        '17:10: warning: defaults.ratio is not used by any item: each sets its own (or the matrix does), or uses a protocol without ratio (ratio is general only)',
        '45:5: warning: matrix.ratio does not apply to items[1] (model veo-3.1-fast-generate-001, openai protocol): it is rendered once per remaining combination',
        '73:5: warning: output.s3 is ignored because output.storage is local',
      ],
    );
  });
});
