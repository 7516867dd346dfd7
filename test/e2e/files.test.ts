// docs/files.md "Nothing is written through a link" and "A file reelflow did not write is never
// replaced" as a user meets them: `reelflow run` on a handed job folder with planted
// links, and a job whose outputs would replace files that are not reelflow's (real Temporal
// development server, real simulator, the built CLI).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';
import { sha256File } from '../support/media';

const KEY = 'sk-test-e2e-files-0123456789';

describe('a job writes only its own files (embedded Temporal, real simulator)', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0, 0], renderMs: [300, 600], seed: 23 });

  it('out/manifest.jsonl planted as a link to a file outside: run refuses it by name, the target untouched', async () => {
    const dir = tempDir();
    const victim = join(dir, 'bashrc');
    writeFileSync(victim, 'export PS1=precious\n');
    mkdirSync(join(dir, 'out'));
    symlinkSync(victim, join(dir, 'out', 'manifest.jsonl'));
    const job = writeJob(dir, { name: 'linked-manifest', baseUrls: e2e.sim.urls, items: [{ id: 'a', prompt: 'A calm lake $(touch X)' }] });
    const creates = Object.values(e2e.sim.stats().createsByPrompt).reduce((a, b) => a + b, 0);
    const result = await runCli(['run', job], { env: e2e.env });
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.ok(result.stderr.includes(join(dir, 'out', 'manifest.jsonl')), result.stderr);
    assert.match(result.stderr, /is a symbolic link: reelflow never writes through one/);
    assert.equal(readFileSync(victim, 'utf8'), 'export PS1=precious\n');
    assert.equal(
      Object.values(e2e.sim.stats().createsByPrompt).reduce((a, b) => a + b, 0),
      creates,
      'nothing rendered',
    );
  });

  it('a folder link out/clips -> ../elsewhere: run refuses it by name before rendering, nothing lands outside', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'elsewhere'));
    mkdirSync(join(dir, 'out'));
    symlinkSync('../elsewhere', join(dir, 'out', 'clips'));
    const job = writeJob(dir, {
      name: 'linked-folder',
      baseUrls: e2e.sim.urls,
      items: [{ id: 'a', prompt: 'a folder link' }],
      extra: '  name: "clips/{id}"',
    });
    const creates = Object.values(e2e.sim.stats().createsByPrompt).reduce((a, b) => a + b, 0);
    const result = await runCli(['run', job], { env: e2e.env });
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.ok(result.stderr.includes(join(dir, 'out', 'clips')), result.stderr);
    assert.match(result.stderr, /is a symbolic link/);
    assert.equal(
      Object.values(e2e.sim.stats().createsByPrompt).reduce((a, b) => a + b, 0),
      creates,
      'nothing rendered',
    );
    assert.deepEqual(readdirSync(join(dir, 'elsewhere')), [], 'no video or part outside the output location');
  });

  it("validate refuses an output stored over the job's own reference (exit 2), run starts nothing", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hero.mp4'), 'the user’s own hero video');
    const job = join(dir, 'clobber.yaml');
    writeFileSync(
      job,
      [
        'version: 1',
        'name: clobber',
        'gateway:',
        `  base_urls: [${e2e.sim.urls.join(', ')}]`,
        'defaults:',
        '  model: seedance-1-0-pro-250528',
        'output:',
        '  dir: .',
        '  name: "{id}"',
        'items:',
        '  - id: hero',
        '    prompt: a hero shot',
        '    references:',
        '      - video: ./hero.mp4',
        '',
      ].join('\n'),
    );
    const validate = await runCli(['validate', job], { env: e2e.env });
    assert.equal(validate.code, 2, validate.stdout + validate.stderr);
    assert.match(validate.stderr, /clobber\.yaml:14:\d+: .*output "hero" of items\[0\] \(line 11\) would be stored as \S*hero\.mp4/);
    const run = await runCli(['run', job], { env: e2e.env });
    assert.equal(run.code, 2, run.stderr);
    assert.equal(readFileSync(join(dir, 'hero.mp4'), 'utf8'), 'the user’s own hero video');
  });

  it('a file reelflow did not write under an output name: the item fails naming it; output.overwrite: true replaces it', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'out'));
    const mine = join(dir, 'out', '001-one.mp4');
    writeFileSync(mine, 'the user’s own video');
    const spec = { name: 'foreign', baseUrls: e2e.sim.urls, items: [{ id: 'one', prompt: 'over a file of the user' }] };
    const job = writeJob(dir, spec);
    const result = await runCli(['run', job], { env: e2e.env });
    assert.equal(result.code, 1, result.stderr);
    assert.ok(result.stdout.includes(mine), result.stdout);
    assert.match(result.stdout, /reelflow did not write it/);
    assert.equal(readFileSync(mine, 'utf8'), 'the user’s own video');
    assert.ok(!existsSync(`${mine}.part`), 'no part left');

    writeJob(dir, { ...spec, extra: '  overwrite: true' });
    const replaced = await runCli(['run', job, '--retry-failed'], { env: e2e.env });
    assert.equal(replaced.code, 0, replaced.stderr);
    const rows = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n');
    const last = JSON.parse(rows.at(-1)!) as { state: string; sha256: string };
    assert.equal(last.state, 'succeeded');
    assert.equal(last.sha256, sha256File(mine));
  });
});
