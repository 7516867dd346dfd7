// `reelflow doctor` as a user runs it: the built command against a real simulator and a real
// Temporal development server. Build first: bash scripts/build.sh
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type SimHandle } from '../../sim';
import { runCli, type CliResult } from '../support/cli';
import { tempDir } from '../support/jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

const KEY = `sk-doctor-${randomBytes(12).toString('hex')}`;

interface JobOptions {
  name: string;
  baseUrls: string[];
  outputDir?: string;
  keyEnv?: string;
  enhance?: boolean;
}

function writeDoctorJob(dir: string, o: JobOptions): string {
  const text = [
    'version: 1',
    `name: ${o.name}`,
    'gateway:',
    '  base_urls:',
    ...o.baseUrls.map((u) => `    - ${u}`),
    ...(o.keyEnv ? [`  api_key_env: ${o.keyEnv}`] : []),
    'defaults:',
    '  model: seedance-1-0-pro-250528',
    '  seconds: "5"',
    ...(o.enhance ? ['enhance:', '  model: claude-sonnet-4-6', '  max_tokens: 100'] : []),
    'output:',
    `  dir: ${o.outputDir ?? './out/{date}'}`,
    'items:',
    '  - prompt: a lighthouse at dusk',
    '  - prompt: a fox in the snow',
    '    model: sora-2',
    '',
  ].join('\n');
  const path = join(dir, `${o.name}.yaml`);
  writeFileSync(path, text);
  return path;
}

function assertNoKey(result: CliResult): void {
  assert.ok(!result.stdout.includes(KEY) && !result.stderr.includes(KEY), 'the key must never be printed');
}

/** `ok    name: detail` lines by name. */
function linesOf(result: CliResult): Map<string, { status: string; detail: string }> {
  const map = new Map<string, { status: string; detail: string }>();
  for (const line of result.stdout.split('\n')) {
    const m = /^(ok|warn|FAIL)\s+(.+?): (.*)$/.exec(line);
    if (m) map.set(m[2]!, { status: m[1]!, detail: m[3]! });
  }
  return map;
}

describe('reelflow doctor', { timeout: 180_000 }, () => {
  let temporal: TestTemporal;
  let sim: SimHandle;
  let env: NodeJS.ProcessEnv;
  let dir: string;

  before(async () => {
    temporal = await startTestTemporal();
    sim = await startSimulator({ ports: [0, 0], keys: [KEY] });
    env = { ...temporal.env, GATEWAY_API_KEY: KEY };
    dir = tempDir('reelflow-doctor-');
  });
  after(async () => {
    await sim?.close();
    await temporal?.stop();
  });

  it('passes a healthy set-up, with one line per check', async () => {
    const [primary, alternate] = sim.urls as [string, string];
    const job = writeDoctorJob(dir, { name: 'healthy', baseUrls: [`${primary}/v1/`, alternate], enhance: true });
    const result = await runCli(['doctor', job], { env });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assertNoKey(result);
    const lines = linesOf(result);
    const expected = [
      'job file',
      'key variable',
      `gateway ${primary} (primary)`,
      `gateway ${alternate} (alternate 1)`,
      'messages',
      'models',
      'temporal',
      'output',
    ];
    for (const name of expected) assert.ok(lines.has(name), `missing check "${name}" in:\n${result.stdout}`);
    for (const [name, line] of lines) assert.notEqual(line.status, 'FAIL', `${name}: ${line.detail}`);
    const primaryLine = lines.get(`gateway ${primary} (primary)`)!;
    assert.match(primaryLine.detail, /removed the trailing slash and the trailing \/v1/);
    assert.match(primaryLine.detail, /reachable in \d+ ms, key accepted/);
    assert.match(lines.get(`gateway ${alternate} (alternate 1)`)!.detail, /answers like the primary/);
    assert.match(lines.get('messages')!.detail, /accepts the key and anthropic-version 2023-06-01/);
    // The simulator has no GET /v1/models: the doctor says so instead of creating a paid task.
    assert.equal(lines.get('models')!.status, 'warn');
    assert.match(lines.get('models')!.detail, /cannot verify .* without creating a task/);
    assert.equal(lines.get('key variable')!.detail, 'GATEWAY_API_KEY is set');
    assert.equal(sim.stats().requests['POST /v1/video/generations'] ?? 0, 0, 'the doctor never creates a task');
  });

  it('warns about a refused primary when an alternate works: a run would fail over (exit 0)', async () => {
    const down = await startSimulator({ ports: [0, 0], keys: [KEY] });
    try {
      const [primary, alternate] = down.urls as [string, string];
      await down.setPortMode(0, 'refuse');
      const job = writeDoctorJob(dir, { name: 'refused', baseUrls: [primary, alternate] });
      const result = await runCli(['doctor', job], { env });
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assertNoKey(result);
      const lines = linesOf(result);
      const line = lines.get(`gateway ${primary} (primary)`);
      assert.equal(line?.status, 'warn', result.stdout);
      assert.match(line!.detail, /connection refused/);
      assert.match(line!.detail, /Fix the address in gateway\.base_urls or start the gateway/);
      assert.match(line!.detail, new RegExp(`fail over to ${alternate.replace(/[.]/g, '\\.')}`));
      assert.equal(lines.get(`gateway ${alternate} (alternate 1)`)?.status, 'ok');
    } finally {
      await down.close();
    }
  });

  it('fails when no base address answers, with a fix hint (exit 3)', async () => {
    const down = await startSimulator({ ports: [0], keys: [KEY] });
    try {
      const [only] = down.urls as [string];
      await down.setPortMode(0, 'refuse');
      const job = writeDoctorJob(dir, { name: 'alldown', baseUrls: [only] });
      const result = await runCli(['doctor', job], { env });
      assert.equal(result.code, 3, result.stdout + result.stderr);
      const line = linesOf(result).get(`gateway ${only} (primary)`);
      assert.equal(line?.status, 'FAIL', result.stdout);
      assert.match(line!.detail, /connection refused.*Fix the address in gateway\.base_urls/);
    } finally {
      await down.close();
    }
  });

  it('exits 2 naming a missing key variable, never printing a key', async () => {
    const job = writeDoctorJob(dir, { name: 'nokey', baseUrls: [sim.urls[0]!], keyEnv: 'REELFLOW_DOCTOR_TEST_KEY', enhance: true });
    const result = await runCli(['doctor', job], { env: { ...env, REELFLOW_DOCTOR_TEST_KEY: undefined } });
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assertNoKey(result);
    const line = linesOf(result).get('key variable');
    assert.equal(line?.status, 'FAIL');
    assert.match(line!.detail, /REELFLOW_DOCTOR_TEST_KEY is not set/);
  });

  it('exits 2 when the gateway refuses the key, without printing it', async () => {
    const wrong = `sk-wrong-${randomBytes(8).toString('hex')}`;
    const job = writeDoctorJob(dir, { name: 'wrongkey', baseUrls: [sim.urls[0]!] });
    const result = await runCli(['doctor', job], { env: { ...env, GATEWAY_API_KEY: wrong } });
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.ok(!result.stdout.includes(wrong) && !result.stderr.includes(wrong));
    assert.match(result.stdout, /^FAIL\s+gateway .*the key in GATEWAY_API_KEY was refused/m);
  });

  it('fails an output directory that cannot be written (exit 3)', async () => {
    writeFileSync(join(dir, 'blocker'), 'a file where a directory should be\n');
    const job = writeDoctorJob(dir, { name: 'unwritable', baseUrls: [sim.urls[0]!], outputDir: './blocker/out' });
    const result = await runCli(['doctor', job], { env });
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const line = linesOf(result).get('output');
    assert.equal(line?.status, 'FAIL', result.stdout);
    assert.match(line!.detail, /not writable/);
    assert.match(line!.detail, /choose another output\.dir/);
  });

  it('exits 2 for an invalid job file', async () => {
    const job = join(dir, 'broken.yaml');
    writeFileSync(job, 'version: 1\nname: broken\nitems: []\nsurprise: true\n');
    const result = await runCli(['doctor', job], { env });
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.equal(linesOf(result).get('job file')?.status, 'FAIL');
  });

  it('--json prints {"ok", "checks": [{"name", "status", "detail"}]} and nothing else on stdout', async () => {
    const job = writeDoctorJob(dir, { name: 'json', baseUrls: sim.urls });
    const result = await runCli(['doctor', job, '--json'], { env });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assertNoKey(result);
    const doc = JSON.parse(result.stdout) as { ok: unknown; checks: Array<Record<string, unknown>> };
    assert.deepEqual(Object.keys(doc).sort(), ['checks', 'ok']);
    assert.equal(doc.ok, true);
    assert.ok(doc.checks.length >= 7);
    for (const check of doc.checks) {
      assert.deepEqual(Object.keys(check).sort(), ['detail', 'name', 'status']);
      assert.ok(['ok', 'warn', 'fail'].includes(check.status as string));
      assert.equal(typeof check.name, 'string');
      assert.equal(typeof check.detail, 'string');
    }
    assert.ok(
      doc.checks.some((c) => c.name === 'temporal' && c.status === 'ok'),
      JSON.stringify(doc.checks),
    );

    const failing = await runCli(['doctor', job, '--json'], { env: { ...env, GATEWAY_API_KEY: undefined } });
    assert.equal(failing.code, 2);
    const failed = JSON.parse(failing.stdout) as { ok: boolean; checks: Array<{ name: string; status: string }> };
    assert.equal(failed.ok, false);
    assert.equal(failed.checks.find((c) => c.name === 'key variable')?.status, 'fail');
  });
});
