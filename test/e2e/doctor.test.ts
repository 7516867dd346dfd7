// `reelflow doctor` as a user runs it: the built command against a real simulator and a real
// Temporal development server. Build first: bash scripts/build.sh
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type SimHandle } from '../../sim';
import { runCli, type CliResult } from '../support/cli';
import { json, scripted, type Scripted } from '../support/scripted-gateway';
import { tempDir } from '../support/jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

const KEY = `sk-doctor-${randomBytes(12).toString('hex')}`;

interface JobOptions {
  name: string;
  baseUrls: string[];
  outputDir?: string;
  keyEnv?: string;
  enhance?: boolean;
  /** Items as `model` names; default: one seedance item and one veo-3.1-fast-generate-001 item. */
  models?: string[];
  /** `models.<name>.protocol` entries. */
  protocols?: Record<string, 'general' | 'openai'>;
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
    ...(o.protocols ? ['models:', ...Object.entries(o.protocols).flatMap(([m, p]) => [`  ${m}:`, `    protocol: ${p}`])] : []),
    'output:',
    `  dir: ${o.outputDir ?? './out/{date}'}`,
    'items:',
    ...(o.models ?? ['seedance-1-0-pro-250528', 'veo-3.1-fast-generate-001']).flatMap((model, i) => [
      `  - prompt: scene ${i + 1}, a lighthouse at dusk`,
      `    model: ${model}`,
    ]),
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

/**
 * A gateway that serves only the openai protocol (/v1/videos) and Messages, answering as the
 * LiteLLM proxy does (test/gateways/OBSERVED.md): FastAPI's 404 {"detail":"Not Found"} on the
 * general protocol's routes, before any key check. `litellm: true` also answers the status check
 * of an id it cannot decode as LiteLLM 1.106.2 does: 500, with its x-litellm-* headers; otherwise
 * with a plain "Video not found". `catalog: false`: no GET /v1/models (FastAPI's 404).
 */
function openaiOnlyGateway(options: { litellm: boolean; catalog?: boolean }): Promise<Scripted> {
  const notFound = { detail: 'Not Found' };
  const litellmHeaders = { 'x-litellm-version': '1.106.2', 'x-litellm-call-id': '371bdb28-c513-4721-a332-9d967f722885' };
  return scripted((req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const keyed = req.headers.authorization === `Bearer ${KEY}` || req.headers['x-api-key'] === KEY;
    const refuse = () => json(res, 400, { error: { message: 'No connected db.', type: 'no_db_connection', param: null, code: '400' } });
    if (req.method === 'GET' && /^\/v1\/videos\/[^/]+$/.test(path)) {
      if (!keyed) return refuse();
      if (!options.litellm) {
        return json(res, 404, { error: { message: 'Video not found', type: 'invalid_request_error', param: null, code: 'not_found' } });
      }
      const message =
        'litellm.InternalServerError: InternalServerError: OpenAIException - Cannot connect to host api.openai.com:443 ssl:<ssl.SSLContext object at 0x7fcf> [Name or service not known]';
      return json(res, 500, { error: { message, type: 'internal_server_error', param: null, code: '500' } }, litellmHeaders);
    }
    if (req.method === 'GET' && path === '/v1/models' && options.catalog !== false) {
      if (!keyed) return refuse();
      return json(res, 200, {
        object: 'list',
        data: ['veo-3.1-fast-generate-001', 'claude-sonnet-4-6'].map((id) => ({ id, object: 'model', owned_by: 'openai' })),
      });
    }
    if (req.method === 'POST' && path === '/v1/messages') {
      if (!keyed) return refuse();
      const message = {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-6',
        content: [{ type: 'text', text: 'A' }],
      };
      return json(res, 200, { ...message, stop_reason: 'max_tokens', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } });
    }
    return json(res, 404, notFound);
  });
}

const messagesCalls = (gateway: Scripted) => gateway.seen.filter((s) => s.path.startsWith('/v1/messages')).length;

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
      'model seedance-1-0-pro-250528',
      'model veo-3.1-fast-generate-001',
      'enhance model claude-sonnet-4-6',
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
    // Every model of the job, the enhance model too, against the key's catalog (GET /v1/models), as `run` checks them.
    assert.match(
      lines.get('model veo-3.1-fast-generate-001')!.detail,
      new RegExp(`^in the catalog of ${primary.replace(/[.]/g, '\\.')} \\(9 models listed for this key\\)$`),
    );
    assert.equal(lines.get('enhance model claude-sonnet-4-6')!.status, 'ok');
    assert.equal(lines.get('key variable')!.detail, 'GATEWAY_API_KEY is set');
    assert.equal(sim.stats().requests['POST /v1/video/generations'] ?? 0, 0, 'the doctor never creates a task');
    assert.equal(sim.stats().requests['POST /v1/videos'] ?? 0, 0, 'the doctor never creates a task');
    // Which protocols each address serves; the simulator serves all three.
    assert.match(primaryLine.detail, /general ✓, openai ✓, messages ✓/);
    assert.match(lines.get(`gateway ${alternate} (alternate 1)`)!.detail, /general ✓, openai ✓, messages ✓/);
    assert.ok(!/litellm/i.test(result.stdout), `no LiteLLM warning for the simulator:\n${result.stdout}`);
  });

  it('a gateway serving only /v1/videos passes a job that uses only the openai protocol: openai ✓, general ✗ (exit 0)', async () => {
    const gateway = await openaiOnlyGateway({ litellm: false });
    const job = writeDoctorJob(dir, {
      name: 'openai-only',
      baseUrls: [gateway.url],
      models: ['veo-3.1-fast-generate-001'],
      protocols: { 'veo-3.1-fast-generate-001': 'openai' },
    });
    const result = await runCli(['doctor', job], { env });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assertNoKey(result);
    const lines = linesOf(result);
    const line = lines.get(`gateway ${gateway.url} (primary)`);
    assert.equal(line?.status, 'ok', result.stdout);
    assert.match(line!.detail, /key accepted/);
    assert.match(line!.detail, /openai ✓/);
    assert.match(line!.detail, /general ✗ \(not used by this job\)/);
    assert.equal(lines.get('model veo-3.1-fast-generate-001')?.status, 'ok', result.stdout);
    assert.ok(!gateway.seen.some((s) => s.method === 'POST' && s.path.startsWith('/v1/video')), 'the doctor never creates a task');
  });

  it('a gateway that publishes no catalog: models not checked, a warning, not a failure (exit 0)', async () => {
    const gateway = await openaiOnlyGateway({ litellm: false, catalog: false });
    const job = writeDoctorJob(dir, {
      name: 'no-catalog',
      baseUrls: [gateway.url],
      models: ['veo-3.1-fast-generate-001'],
      protocols: { 'veo-3.1-fast-generate-001': 'openai' },
    });
    const result = await runCli(['doctor', job], { env });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const models = linesOf(result).get('models');
    assert.equal(models?.status, 'warn', result.stdout);
    assert.match(
      models!.detail,
      /^no catalog published \(GET \/v1\/models: http:\/\/127\.0\.0\.1:\d+: HTTP 404: Not Found\); model names not checked/,
    );
  });

  it('a model the catalog lacks: FAIL with its line and the closest names, in the words `run` uses (exit 2)', async () => {
    const job = writeDoctorJob(dir, { name: 'typo', baseUrls: sim.urls, models: ['veo3.1-fast'] });
    const result = await runCli(['doctor', job], { env });
    assert.equal(result.code, 2, result.stdout + result.stderr);
    const line = linesOf(result).get('model veo3.1-fast');
    assert.equal(line?.status, 'FAIL', result.stdout);
    assert.match(
      line!.detail,
      /^model "veo3\.1-fast" is not in the gateway's catalog for this key \(GET \/v1\/models on http:\/\/127\.0\.0\.1:\d+ lists 9 models\); set at .*typo\.yaml:\d+:12 \(items\[0\]\.model\); closest in the catalog: veo-3\.1-fast-generate-001, /,
    );
    const run = await runCli(['run', job], { env });
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.ok(run.stderr.includes(line!.detail), `run says the same:\n${run.stderr}`);
    assert.equal(sim.stats().requests['POST /v1/video/generations'] ?? 0, 0, 'nothing created');
  });

  it('a job that uses the general protocol fails against it, naming the protocol and the address (exit 2)', async () => {
    const gateway = await openaiOnlyGateway({ litellm: false });
    const job = writeDoctorJob(dir, {
      name: 'general-on-openai-only',
      baseUrls: [gateway.url],
      models: ['veo-3.1-fast-generate-001', 'seedance-1-0-pro-250528'],
      protocols: { 'veo-3.1-fast-generate-001': 'openai' },
    });
    const result = await runCli(['doctor', job], { env });
    assert.equal(result.code, 2, result.stdout + result.stderr);
    const line = linesOf(result).get(`gateway ${gateway.url} (primary)`);
    assert.equal(line?.status, 'FAIL', result.stdout);
    assert.match(line!.detail, /general ✗, openai ✓/);
    assert.match(line!.detail, new RegExp(`${gateway.url.replace(/[.]/g, '\\.')} does not serve the general protocol`));
    assert.match(line!.detail, /seedance-1-0-pro-250528/);
    assert.doesNotMatch(line!.detail, /must be the gateway's root/);
    // The address works for what it serves: the models check still runs.
    assert.equal(linesOf(result).get('model veo-3.1-fast-generate-001')?.status, 'ok', result.stdout);
  });

  it('probes Messages only when the job enhances', async () => {
    const gateway = await openaiOnlyGateway({ litellm: false });
    const plain = writeDoctorJob(dir, {
      name: 'no-enhance',
      baseUrls: [gateway.url],
      models: ['veo-3.1-fast-generate-001'],
      protocols: { 'veo-3.1-fast-generate-001': 'openai' },
    });
    const without = await runCli(['doctor', plain], { env });
    assert.equal(without.code, 0, without.stdout + without.stderr);
    assert.equal(messagesCalls(gateway), 0, 'no Messages call for a job without enhance:');
    assert.doesNotMatch(linesOf(without).get(`gateway ${gateway.url} (primary)`)!.detail, /messages/);

    const enhanced = writeDoctorJob(dir, {
      name: 'enhance',
      baseUrls: [gateway.url],
      models: ['veo-3.1-fast-generate-001'],
      protocols: { 'veo-3.1-fast-generate-001': 'openai' },
      enhance: true,
    });
    const result = await runCli(['doctor', enhanced], { env });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.ok(messagesCalls(gateway) > 0, 'a job with enhance: gets its Messages checked');
    const lines = linesOf(result);
    assert.match(lines.get(`gateway ${gateway.url} (primary)`)!.detail, /openai ✓, messages ✓/);
    assert.equal(lines.get('messages')?.status, 'ok', result.stdout);
  });

  it('reads LiteLLM\'s 500 for an id it cannot decode as "the route exists", and warns about its router re-sending creates', async () => {
    const gateway = await openaiOnlyGateway({ litellm: true });
    const job = writeDoctorJob(dir, {
      name: 'litellm-shaped',
      baseUrls: [gateway.url],
      models: ['veo-3.1-fast-generate-001'],
      protocols: { 'veo-3.1-fast-generate-001': 'openai' },
    });
    const result = await runCli(['doctor', job], { env });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const lines = linesOf(result);
    const line = lines.get(`gateway ${gateway.url} (primary)`);
    assert.equal(line?.status, 'ok', result.stdout);
    assert.match(line!.detail, /openai ✓/);
    const warning = lines.get('litellm');
    assert.equal(warning?.status, 'warn', result.stdout);
    assert.match(warning!.detail, /LiteLLM proxy 1\.106\.2/);
    assert.match(warning!.detail, /router_settings\.num_retries: 0/);
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
    const doc = JSON.parse(result.stdout) as { ok: unknown; checks: Array<Record<string, unknown>>; estimate: { unpriced_items: number } };
    assert.deepEqual(Object.keys(doc).sort(), ['budget', 'checks', 'estimate', 'gateway_prices', 'ok']);
    // The simulator publishes no prices and the job names none: every item is counted unpriced (docs/costs.md).
    assert.equal(doc.estimate.unpriced_items, 2);
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
