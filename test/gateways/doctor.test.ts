// `reelflow doctor` (the built command) against the two real gateways of docs/gateways.md ("Tested gateways"), each in front of
// the project's fake upstream: it must say which protocols each address serves, pass a job that
// uses what the gateway serves, fail one that does not, and recognise a LiteLLM proxy. Build
// first: bash scripts/build.sh. The gateways are provisioned by scripts/litellm.sh and
// scripts/new-api.sh (test/support/gateways.ts).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, type CliResult } from '../support/cli';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { GATEWAY_MODELS, startLiteLLM, startNewApi, type Gateway } from '../support/gateways';
import { tempDir } from '../support/jobs';

interface DoctorJob {
  name: string;
  base: string;
  /** model -> protocol, one item each. */
  items: Record<string, 'general' | 'openai'>;
  enhance?: boolean;
}

function writeJob(dir: string, job: DoctorJob): string {
  const models = Object.entries(job.items);
  const text = [
    'version: 1',
    `name: ${job.name}`,
    'gateway:',
    `  base_urls: [${job.base}]`,
    'defaults:',
    '  seconds: "4"',
    'models:',
    ...models.flatMap(([model, protocol]) => [`  ${model}:`, `    protocol: ${protocol}`]),
    ...(job.enhance ? ['enhance:', `  model: ${GATEWAY_MODELS.messages}`, '  max_tokens: 100'] : []),
    'output:',
    '  dir: ./out',
    'items:',
    ...models.flatMap(([model], i) => [`  - prompt: scene ${i + 1}, a lighthouse at dusk`, `    model: ${model}`]),
    '',
  ].join('\n');
  const path = join(dir, `${job.name}.yaml`);
  writeFileSync(path, text);
  return path;
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

/** The doctor with the gateway's key, and an empty state directory: no Temporal server is needed for its check. */
function doctor(gateway: Gateway, job: string, dir: string): Promise<CliResult> {
  const env = { ...process.env, GATEWAY_API_KEY: gateway.key, REELFLOW_STATE_DIR: join(dir, 'state'), TEMPORAL_ADDRESS: undefined };
  return runCli(['doctor', job], { env, cwd: dir });
}

function assertNoKey(result: CliResult, gateway: Gateway): void {
  assert.ok(!result.stdout.includes(gateway.key) && !result.stderr.includes(gateway.key), 'the key must never be printed');
}

describe('reelflow doctor against the LiteLLM proxy 1.106', { timeout: 300_000 }, () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let dir: string;
  before(async () => {
    upstream = await startFakeUpstream();
    gateway = await startLiteLLM(upstream);
    dir = tempDir('reelflow-doctor-litellm-');
  });
  after(async () => {
    await gateway?.stop();
    await upstream?.stop();
  });

  it('passes a job that uses the openai protocol and enhance: openai ✓, general ✗, messages ✓; warns about the router re-sending creates', async () => {
    const job = writeJob(dir, { name: 'litellm-ok', base: gateway.url, items: { [GATEWAY_MODELS.openai]: 'openai' }, enhance: true });
    const requestsBefore = upstream.requests.length;
    const result = await doctor(gateway, job, dir);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assertNoKey(result, gateway);
    const lines = linesOf(result);
    const line = lines.get(`gateway ${gateway.url} (primary)`);
    assert.equal(line?.status, 'ok', result.stdout);
    assert.match(line!.detail, /key accepted/);
    assert.match(line!.detail, /general ✗ \(not used by this job\), openai ✓, messages ✓/);
    assert.equal(lines.get('messages')?.status, 'ok', result.stdout);
    assert.equal(lines.get(`model ${GATEWAY_MODELS.openai}`)?.status, 'ok', result.stdout);
    const warning = lines.get('litellm');
    assert.equal(warning?.status, 'warn', result.stdout);
    assert.match(warning!.detail, new RegExp(`${gateway.url.replace(/[.]/g, '\\.')} is a LiteLLM proxy 1\\.106\\.2`));
    assert.match(warning!.detail, /router_settings\.num_retries: 0/);

    // The probes stayed inside LiteLLM: no video request reached the upstream, and LiteLLM did not
    // send the impossible task id to its default provider (api.openai.com).
    const sent = upstream.requests.slice(requestsBefore);
    assert.deepEqual(
      sent.filter((r) => !r.path.startsWith('/v1/messages')).map((r) => `${r.method} ${r.path}`),
      [],
      'only the one Messages call reaches the upstream',
    );
    assert.equal(sent.length, 1, 'one Messages call (max_tokens 1) reaches the upstream');
    assert.doesNotMatch(gateway.output(), /api\.openai\.com/);
  });

  it('fails a job that uses the general protocol, naming the protocol and the address (exit 2)', async () => {
    const job = writeJob(dir, {
      name: 'litellm-general',
      base: gateway.url,
      items: { [GATEWAY_MODELS.openai]: 'openai', [GATEWAY_MODELS.general]: 'general' },
    });
    const result = await doctor(gateway, job, dir);
    assert.equal(result.code, 2, result.stdout + result.stderr);
    const line = linesOf(result).get(`gateway ${gateway.url} (primary)`);
    assert.equal(line?.status, 'FAIL', result.stdout);
    assert.match(line!.detail, /general ✗, openai ✓/);
    assert.match(line!.detail, new RegExp(`${gateway.url.replace(/[.]/g, '\\.')} does not serve the general protocol`));
    assert.match(line!.detail, /HTTP 404: Not Found/);
    assert.doesNotMatch(line!.detail, /must be the gateway's root/);
  });
});

describe('reelflow doctor against new-api v0.10.0', { timeout: 300_000 }, () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let dir: string;
  before(async () => {
    upstream = await startFakeUpstream();
    gateway = await startNewApi(upstream);
    dir = tempDir('reelflow-doctor-new-api-');
  });
  after(async () => {
    await gateway?.stop();
    await upstream?.stop();
  });

  it('passes a job with both protocols and enhance: general ✓, openai ✓, messages ✓, every model listed, no LiteLLM warning', async () => {
    const job = writeJob(dir, {
      name: 'new-api-ok',
      base: gateway.url,
      items: { [GATEWAY_MODELS.general]: 'general', [GATEWAY_MODELS.openai]: 'openai' },
      enhance: true,
    });
    const result = await doctor(gateway, job, dir);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assertNoKey(result, gateway);
    const lines = linesOf(result);
    for (const [name, line] of lines) assert.equal(line.status, 'ok', `${name}: ${line.detail}`);
    assert.match(lines.get(`gateway ${gateway.url} (primary)`)!.detail, /key accepted; general ✓, openai ✓, messages ✓/);
    assert.equal(lines.get(`model ${GATEWAY_MODELS.general}`)?.status, 'ok');
    assert.equal(lines.get(`model ${GATEWAY_MODELS.openai}`)?.status, 'ok');
    assert.equal(lines.has('litellm'), false, result.stdout);
    assert.equal(
      upstream.requests.filter((r) => r.method === 'POST' && !r.path.startsWith('/v1/messages')).length,
      0,
      'the doctor never creates a task',
    );
  });
});
