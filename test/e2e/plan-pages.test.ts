// Large job files against Temporal's 2 MB payload limit (docs/limits.md): a page of the plan is
// one activity result, so pages are sized by bytes; an item too large for any page is refused by
// `validate` at its line. Before, 100 items with a ~24 KB inline image each passed validate and
// then failed the whole job on every run (TMPRL1103: a 2.4 MB page).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir } from '../support/jobs';

const KEY = 'sk-test-e2e-plan-pages-0123456789';

function jobText(name: string, baseUrls: string[], items: string[]): string {
  return [
    'version: 1',
    `name: ${name}`,
    'gateway:',
    '  base_urls:',
    ...baseUrls.map((u) => `    - ${u}`),
    'defaults:',
    '  model: seedance-1-0-pro-250528',
    '  seconds: "5"',
    'concurrency:\n  max_in_flight: 20',
    'polling:\n  initial: 500ms\n  max: 2s\n  timeout: 5m',
    'output:\n  dir: ./out',
    'items:',
    ...items,
    '',
  ].join('\n');
}

describe('plan pages within Temporal payload limits (embedded Temporal, real simulator)', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [200, 400], seed: 11, distinctVideos: false });

  it('renders 100 items that each carry a ~24 KB inline data: image, exit 0', async () => {
    const dir = tempDir();
    const items = Array.from({ length: 100 }, (_, i) => {
      const image = `data:image/png;base64,${randomBytes(18 * 1024).toString('base64')}`;
      return [`  - id: shot-${i}`, `    prompt: "shot ${i}"`, '    references:', `      - image: "${image}"`].join('\n');
    });
    const job = join(dir, 'inline-images.yaml');
    writeFileSync(job, jobText('inline-images', e2e.sim.urls, items));

    const checked = await runCli(['validate', job], { env: e2e.env });
    assert.equal(checked.code, 0, checked.stderr);
    const result = await runCli(['run', job], { env: e2e.env });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /inline-images: 100 of 100 succeeded/);
    const out = join(dir, 'out');
    assert.equal(readdirSync(out).filter((f) => f.endsWith('.mp4')).length, 100);
    const rows = readFileSync(join(out, 'manifest.jsonl'), 'utf8').trim().split('\n');
    assert.equal(rows.length, 100);
  });

  it('refuses a 3 MB prompt in validate and run, naming its line and the limit, exit 2', async () => {
    const dir = tempDir();
    const job = join(dir, 'huge-prompt.yaml');
    const prompt = 'a slow pan over the sea '.repeat(Math.ceil((3 * 1024 * 1024) / 24));
    writeFileSync(
      job,
      jobText('huge-prompt', e2e.sim.urls, ['  - id: small', '    prompt: "fine"', '  - id: huge', `    prompt: "${prompt}"`]),
    );
    const line =
      1 +
      readFileSync(job, 'utf8')
        .split('\n')
        .findIndex((l) => l.startsWith('    prompt: "a slow pan'));

    const checked = await runCli(['validate', job], { env: e2e.env });
    assert.equal(checked.code, 2, `${checked.stdout}\n${checked.stderr}`);
    const said = `${checked.stdout}\n${checked.stderr}`;
    assert.match(said, new RegExp(`huge-prompt\\.yaml:${line}:\\d+: .*256 KiB`), said.slice(0, 2000));
    assert.ok(said.length < 20_000, 'the prompt itself is not printed back');

    const creates = Object.values(e2e.sim.stats().createsByPrompt).reduce((a, b) => a + b, 0);
    const run = await runCli(['run', job], { env: e2e.env });
    assert.equal(run.code, 2, `${run.stdout}\n${run.stderr}`.slice(0, 2000));
    assert.match(run.stderr, new RegExp(`huge-prompt\\.yaml:${line}:`));
    assert.equal(
      Object.values(e2e.sim.stats().createsByPrompt).reduce((a, b) => a + b, 0),
      creates,
      'nothing was created',
    );
  });
});
