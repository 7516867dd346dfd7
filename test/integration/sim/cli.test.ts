import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
    '--callback-lost-rate',
    '--callback-late-rate',
    '--callback-late',
    '--callback-duplicate-rate',
    '--callback-forged-rate',
    '--callback-out-of-order-rate',
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

test('reelflow sim --callback-* flags: the callback faults from the command line, as POST /__sim/faults sets them', async () => {
  const calls: Array<{ path: string; status: string; at: number }> = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { status: string };
      calls.push({ path: req.url ?? '', status: body.status, at: Date.now() });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb/token123`;
  const key = 'sk-cli-callbacks-123456';
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      FIXTURE,
      'sim',
      '--port',
      '0',
      '--key',
      key,
      '--render-time',
      '400ms',
      '--callback-late-rate',
      '1',
      '--callback-late',
      '700ms',
      '--callback-duplicate-rate',
      '100%',
      '--callback-forged-rate',
      '1',
      '--callback-out-of-order-rate',
      '0',
      '--callback-lost-rate',
      '0.25',
      '--seed',
      '4',
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
    const url = /sim: listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
    const auth = { authorization: `Bearer ${key}` };
    const faults = JSON.parse(ok(await raw(`${url}/__sim/faults`, { headers: auth })).body.toString()) as {
      faults: Record<string, unknown>;
    };
    assert.deepEqual(
      [
        faults.faults.callbackLostRate,
        faults.faults.callbackLateRate,
        faults.faults.callbackLateMs,
        faults.faults.callbackDuplicateRate,
        faults.faults.callbackForgedRate,
        faults.faults.callbackOutOfOrderRate,
      ],
      [0.25, 1, 700, 1, 1, 0],
    );
    // Lost is drawn first: create until one task's final callback is not lost, and see it late, three times.
    const created: number[] = [];
    for (let i = 0; i < 6; i++) {
      created.push(Date.now());
      const answer = ok(
        await raw(`${url}/v1/video/generations`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'seedance-1-0-pro-250528', prompt: `cb ${i}`, metadata: { callback_url: `${callbackUrl}${i}` } }),
        }),
      );
      assert.equal(answer.status, 200, answer.body.toString());
    }
    await new Promise((r) => setTimeout(r, 2_500));
    const forged = calls.filter((c) => !/\/cb\/token123\d$/.test(c.path));
    assert.equal(forged.length, 6, `one forged callback per task: ${JSON.stringify(calls)}`);
    const finals = (i: number) => calls.filter((c) => c.path === `/cb/token123${i}` && c.status === 'succeeded');
    const counts = created.map((_, i) => finals(i).length);
    assert.ok(
      counts.every((n) => n === 0 || n === 3),
      `a final callback lost, or sent three times: ${counts.join(',')}`,
    );
    assert.ok(counts.includes(3) && counts.includes(0), `some lost (a quarter), some not: ${counts.join(',')}`);
    const sent = counts.indexOf(3);
    assert.ok(finals(sent)[0]!.at - created[sent]! >= 400 + 700, 'late: 700 ms after the 400 ms render');
  } finally {
    child.kill('SIGTERM');
    receiver.close();
  }
});
