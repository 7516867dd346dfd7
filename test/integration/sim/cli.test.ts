import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { Command } from 'commander';
import { registerSimCommand } from '../../../cli/commands/sim';
import { ok, raw } from './helpers';

const FIXTURE = join(__dirname, 'fixtures', 'run-sim-cli.ts');

test('reelflow sim --help documents every flag', () => {
  const program = new Command('reelflow');
  registerSimCommand(program);
  const sim = program.commands.find((c) => c.name() === 'sim');
  assert.ok(sim);
  const help = sim.helpInformation();
  for (const flag of [
    '--port',
    '--host',
    '--key',
    '--models',
    '--render-time',
    '--video-size',
    '--fail-rate',
    '--rate-limit-rate',
    '--error-rate',
    '--reset-rate',
    '--cut-download-rate',
    '--not-exist-window',
    '--lost-create-rate',
    '--slow',
    '--cdn',
    '--cdn-ttl',
    '--model-not-found-503',
    '--seed',
    '--port-mode',
    '--stream-error-rate',
    '--profile',
    '--server-address',
    '--refresh',
    '--fetch-guard-port',
    '--litellm-database',
    '--no-cdn',
  ]) {
    assert.ok(help.includes(`${flag} `), `help lacks ${flag}`);
  }
  assert.match(help, /20s\.\.90s/);
});

test('reelflow sim prints one line per port, serves, never prints the key, stops on SIGTERM', async () => {
  const secret = 'sk-cli-secret-123456';
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      FIXTURE,
      'sim',
      '--port',
      '0',
      '--port',
      '0',
      '--key',
      secret,
      '--cdn',
      '--render-time',
      '0s',
      '--video-size',
      '64KB',
      '--models',
      'veo-3.1-fast-generate-001,claude-haiku-4-5',
      '--fail-rate',
      '0',
      '--seed',
      '3',
      '--port-mode',
      '1=503',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: join(__dirname, '../../..') },
  );
  let out = '';
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('Ctrl-C')) resolve();
    });
    child.on('exit', () => reject(new Error(`exited early: ${out}`)));
  });
  try {
    await ready;
    const urls = [...out.matchAll(/sim: listening on (http:\/\/127\.0\.0\.1:\d+)/g)].map((m) => m[1] as string);
    assert.equal(urls.length, 2, out);
    assert.match(out, /sim: cdn on http:\/\/127\.0\.0\.1:\d+/);
    assert.match(out, /\(mode 503\)/);
    const created = ok(
      await raw(`${urls[0] as string}/v1/video/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'veo-3.1-fast-generate-001', prompt: 'cli' }),
      }),
    );
    assert.equal(created.status, 200);
    assert.equal(ok(await raw(`${urls[1] as string}/v1/video/generations/x`)).status, 503);
    const notInCatalog = ok(
      await raw(`${urls[0] as string}/v1/video/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'kling-v2-1', prompt: 'cli' }),
      }),
    );
    assert.equal(notInCatalog.status, 404);
  } finally {
    child.kill('SIGTERM');
  }
  const code = await new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.on('exit', (c) => resolve(c));
  });
  assert.equal(code, 0, out);
  assert.match(out, /sim: stopped/);
  assert.ok(!out.includes(secret), 'the key never appears in the output');
});

test('reelflow sim rejects bad flag values as usage errors', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, 'sim', '--render-time', 'soon'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: join(__dirname, '../../..'),
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  assert.notEqual(code, 0);
  assert.match(err, /--render-time.*not a duration/s);
});
