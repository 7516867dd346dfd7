// The command for people at a terminal and for scripts (docs/commands.md): the dry run's
// summary and its openai form, suggestions for unknown commands, shell completion run in a real
// bash, and the web UI link of an embedded server that ends with `run`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startSimulator, type SimHandleExt } from '../../sim';
import { runCli } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';

const run = promisify(execFile);
const KEY = 'sk-test-cli-ux-000000000000';

/** A job of `n` items, half on a general-protocol model and half on an openai one. */
function writeMixedJob(dir: string, n: number, extra = ''): string {
  const items = Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? `  - id: g${i}\n    prompt: general ${i}`
      : `  - id: o${i}\n    prompt: openai ${i}\n    model: veo-3.1-fast-generate-001`,
  );
  const path = join(dir, 'mixed.yaml');
  writeFileSync(
    path,
    [
      'name: mixed',
      'gateway:',
      '  base_urls: [http://127.0.0.1:9]',
      'defaults:',
      '  model: seedance-1-0-pro-250528',
      '  seconds: "05"',
      'models:',
      '  veo-3.1-fast-generate-001:',
      '    protocol: openai',
      extra,
      'items:',
      ...items,
      '',
    ].join('\n'),
  );
  return path;
}

describe('run --dry-run', () => {
  it('on 80 items prints a few example requests and ends with the items per model and protocol; --full prints every request', async () => {
    const job = writeMixedJob(tempDir(), 80);
    const short = await runCli(['run', job, '--dry-run'], { env: { ...process.env, GATEWAY_API_KEY: KEY } });
    assert.equal(short.code, 0, short.stderr);
    const lines = short.stdout.trimEnd().split('\n');
    assert.ok(lines.length < 80, `a summary, not every request: ${lines.length} lines`);
    assert.deepEqual(lines.slice(-4), [
      '80 create request(s), by model and protocol:',
      '  seedance-1-0-pro-250528    general  40  POST http://127.0.0.1:9/v1/video/generations',
      '  veo-3.1-fast-generate-001  openai   40  POST http://127.0.0.1:9/v1/videos',
      'shown: the first request of each; every request: reelflow run --dry-run --full (or --json)',
    ]);
    const full = await runCli(['run', job, '--dry-run', '--full'], { env: { ...process.env, GATEWAY_API_KEY: KEY } });
    assert.equal(full.code, 0, full.stderr);
    assert.equal((full.stdout.match(/^#\d+ /gm) ?? []).length, 80);
    assert.match(full.stdout, /80 create request\(s\), by model and protocol:\n/);
    assert.ok(!short.stdout.includes(KEY) && !full.stdout.includes(KEY));
  });

  it('shows the openai form exactly as the gateway client builds it: seconds "05" is sent as "5"', async () => {
    const job = writeMixedJob(tempDir(), 2);
    const json = await runCli(['run', job, '--dry-run', '--json'], { env: process.env });
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as { items: Array<{ request: { form?: Record<string, string>; body?: { seconds?: string } } }> };
    assert.equal(parsed.items[1]!.request.form!.seconds, '5');
    assert.equal(parsed.items[0]!.request.body!.seconds, '5');
  });
});

describe('unknown commands', () => {
  it('suggest the command meant, at the top and under schedule (remove -> delete)', async () => {
    const remove = await runCli(['schedule', 'remove', 'x.yaml']);
    assert.equal(remove.code, 2);
    assert.match(remove.stderr, /unknown command 'remove'\n\(Did you mean delete\?\)/);
    const typo = await runCli(['schedule', 'aply', 'x.yaml']);
    assert.match(typo.stderr, /\(Did you mean apply\?\)/);
    const top = await runCli(['stauts']);
    assert.equal(top.code, 2);
    assert.match(top.stderr, /\(Did you mean status\?\)/);
    const ls = await runCli(['ls']);
    assert.match(ls.stderr, /\(Did you mean status\?\)/);
  });
});

describe('reelflow completion', () => {
  /** What bash's completion offers for the words typed (the last one is being completed). */
  async function complete(script: string, words: string[]): Promise<string[]> {
    const dir = tempDir();
    const file = join(dir, 'reelflow.bash');
    writeFileSync(file, script);
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const { stdout } = await run(
      'bash',
      [
        '--norc',
        '--noprofile',
        '-c',
        `cd '${dir}' && source '${file}' && COMP_WORDS=(${quoted}) && COMP_CWORD=${words.length - 1} && _reelflow_completion && printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { encoding: 'utf8' },
    );
    return stdout.split('\n').filter(Boolean);
  }

  it('bash: completes commands, subcommands and options in a real bash', async () => {
    const result = await runCli(['completion', 'bash']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /complete .*-F _reelflow_completion reelflow/);
    assert.deepEqual(await complete(result.stdout, ['reelflow', 'sch']), ['schedule']);
    const top = await complete(result.stdout, ['reelflow', '']);
    for (const c of ['run', 'validate', 'status', 'results', 'schedule', 'completion'])
      assert.ok(top.includes(c), `${c} in ${top.join(' ')}`);
    assert.deepEqual(await complete(result.stdout, ['reelflow', 'schedule', 'd']), ['delete']);
    assert.deepEqual((await complete(result.stdout, ['reelflow', 'schedule', 'p'])).sort(), ['pause']);
    assert.ok((await complete(result.stdout, ['reelflow', 'run', '--dr'])).includes('--dry-run'));
    assert.ok((await complete(result.stdout, ['reelflow', 'schedule', 'apply', '--'])).every((o) => o.startsWith('--')));
    // An option with a fixed set of values completes them.
    assert.deepEqual(await complete(result.stdout, ['reelflow', 'run', 'job.yaml', '--log-format', '']), ['file', 'json']);
    assert.deepEqual(await complete(result.stdout, ['reelflow', 'sim', '--profile', 'new']), ['new-api', 'new-api-0.10']);
  });

  it('zsh and fish scripts name every command; another shell is bad usage', async () => {
    const zsh = await runCli(['completion', 'zsh']);
    assert.equal(zsh.code, 0, zsh.stderr);
    assert.match(zsh.stdout, /bashcompinit/);
    assert.match(zsh.stdout, /_reelflow_completion/);
    const fish = await runCli(['completion', 'fish']);
    assert.equal(fish.code, 0, fish.stderr);
    assert.match(fish.stdout, /complete -c reelflow -n __fish_use_subcommand -a run /);
    assert.match(fish.stdout, /complete -c reelflow -n '__fish_seen_subcommand_from run' -l dry-run /);
    assert.match(fish.stdout, /complete -c reelflow -n '__fish_seen_subcommand_from run' -l log-format -x -a 'file json' /);
    const other = await runCli(['completion', 'tcsh']);
    assert.equal(other.code, 2);
    assert.match(other.stderr, /bash, zsh or fish/);
  });
});

describe('run with an embedded server of its own', () => {
  let sim: SimHandleExt;
  before(async () => {
    sim = await startSimulator({ ports: [0], renderMs: [100, 200], seed: 25, keys: [KEY] });
  });
  after(async () => {
    await sim?.close();
  });

  it('says that the web UI link lasts only while the run does, and points at reelflow server', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'ui-link', baseUrls: sim.urls, items: [{ id: 'one', prompt: 'ui link' }] });
    const env = { ...process.env, GATEWAY_API_KEY: KEY, REELFLOW_STATE_DIR: join(dir, 'state'), TEMPORAL_ADDRESS: undefined };
    const result = await runCli(['run', job], { env });
    assert.equal(result.code, 0, result.stderr);
    const link = /^Temporal web UI \(only while this run lasts; `reelflow server` keeps one open\): (http:\/\/\S+)$/m.exec(result.stderr);
    assert.ok(link, result.stderr);
    await assert.rejects(fetch(link[1]!), 'the embedded server ended with the run, and its UI with it');
  });
});
