// Every command that loads a job file refuses a matrix bomb before building it (docs/limits-input.md):
// 1.4 KB of YAML, four matrix keys of 100 values, is 10^8 items. The built command, with its heap
// capped at 300 MB: the old code died there ("heap out of memory", exit 134) or ran for minutes.
// And `run` names an output.dir outside the job file's folder.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from '../support/cli';

const hundred = `[${Array.from({ length: 100 }, (_, i) => i).join(',')}]`;
const BOMB = [
  'name: bomb',
  'gateway:',
  '  base_urls: [http://127.0.0.1:9]',
  'defaults:',
  '  model: seedance-1-0-pro-250528',
  'schedule:',
  '  cron: "0 3 * * *"',
  'matrix:',
  ...['a', 'b', 'c', 'd'].map((k) => `  ${k}: ${hundred}`),
  'items:',
  '  - id: x',
  '    prompt: "{a} {b} {c} {d}"',
  '',
].join('\n');

describe('a matrix bomb, through the built command', () => {
  const dir = mkdtempSync(join(tmpdir(), 'reelflow-bomb-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'bomb.yaml');
  writeFileSync(file, BOMB);
  const env = {
    ...process.env,
    NODE_OPTIONS: '--max-old-space-size=300',
    REELFLOW_STATE_DIR: join(dir, 'state'),
    TEMPORAL_ADDRESS: '127.0.0.1:9',
  };

  for (const args of [['validate'], ['run'], ['schedule', 'apply']]) {
    it(`${args.join(' ')} refuses it at once with exit 2, naming matrix and the limit`, async () => {
      assert.ok(BOMB.length < 1500);
      const started = Date.now();
      const result = await runCli([...args, file], { env });
      const took = Date.now() - started;
      assert.equal(result.code, 2, `${result.stderr}\n${result.stdout}`);
      assert.match(result.stderr, /bomb\.yaml:8:1: the job expands to 100000000 items .*at most 200000 are allowed/);
      // Start-up included: the refusal itself is well under a second (test/unit/jobfile/bounds.test.ts).
      assert.ok(took < 10_000, `took ${took} ms`);
    });
  }
});

it('run names an output.dir outside the job file folder before it starts anything', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'reelflow-handed-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'handed.yaml');
  const elsewhere = join(dir, '..', 'reelflow-elsewhere-output');
  writeFileSync(
    file,
    [
      'name: handed',
      'gateway:',
      '  base_urls: [http://127.0.0.1:9]',
      'output:',
      `  dir: ${elsewhere}`,
      'items:',
      '  - prompt: hi',
      '    model: m',
      '',
    ].join('\n'),
  );
  const result = await runCli(['run', '--dry-run', file], { env: { ...process.env, REELFLOW_STATE_DIR: join(dir, 'state') } });
  assert.equal(result.code, 0, `${result.stderr}\n${result.stdout}`);
  assert.match(
    result.stderr + result.stdout,
    /warning: .*handed\.yaml:5:8: warning: output\.dir: \S*reelflow-elsewhere-output is outside the job file's folder/,
  );
});
