// reelflow itself (the built CLI, a real Temporal dev server) through the real LiteLLM proxy 1.106.2
// (scripts/litellm.sh), in front of the project's fake upstream. LiteLLM serves the openai protocol
// and Messages only (test/gateways/OBSERVED.md), so every item is Veo 3.1 Fast over /v1/videos. A job with
// enhancement and a dead first base address runs through a lossy proxy in front of the gateway,
// which loses one create's answer and cuts one download short; the upstream counts the paid
// creates and Messages calls and records every request's headers.
// Build first: bash scripts/build.sh
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, type CliResult } from '../support/cli';
import { enhanced, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import {
  GATEWAY_MODELS,
  closedBaseUrl,
  filesContaining,
  manifestRows,
  rowOf,
  startLiteLLM,
  startLossyProxy,
  upstreamMessages,
  upstreamRequestsWithKey,
  writeGatewayJob,
  type Gateway,
  type LossyProxy,
} from '../support/gateways';
import { sha256File } from '../support/media';
import { tempDir } from '../support/jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

/** Markers in a prompt that make the proxy lose the first create answer carrying them. */
const LOSE_SAFE = '[lose:safe]';
const LOSE_ALWAYS = '[lose:always]';

const ITEMS = {
  cliff: 'A lighthouse on a cliff at dusk, waves below',
  stairs: 'A keeper climbing the spiral stairs',
  lost: `A gull over the harbour ${LOSE_SAFE}`,
};

/** Every item is Veo 3.1 Fast over the openai protocol: the only video protocol LiteLLM serves. */
function writeJob(dir: string, name: string, baseUrls: string[], items: Record<string, string>, extra: string[] = []): string {
  return writeGatewayJob(dir, {
    name,
    baseUrls,
    defaults: [`model: ${GATEWAY_MODELS.openai}`, 'protocol: openai', 'seconds: "4"', 'size: 1280x720'],
    items: Object.entries(items).map(([id, prompt]) => ({ id, prompt })),
    extra,
  });
}

describe('reelflow through the LiteLLM proxy 1.106.2', { timeout: 600_000 }, () => {
  let temporal: TestTemporal;
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let proxy: LossyProxy;
  let dead: string;
  let env: NodeJS.ProcessEnv;
  let dir: string;
  let job: string;
  let videoSha: string;
  const outputs: CliResult[] = [];
  const run = async (args: string[]) => {
    const result = await runCli(args, { env });
    outputs.push(result);
    return result;
  };
  /** Messages calls that reached the upstream (each one paid), through LiteLLM. */

  before(async () => {
    [temporal, upstream] = await Promise.all([startTestTemporal(), startFakeUpstream({ renderMs: 1500 })]);
    gateway = await startLiteLLM(upstream);
    proxy = await startLossyProxy(gateway.url, { loseCreates: [LOSE_SAFE, LOSE_ALWAYS], cutDownloads: 1 });
    dead = await closedBaseUrl();
    env = { ...temporal.env, GATEWAY_API_KEY: gateway.key };
    dir = tempDir('reelflow-litellm-e2e-');
    job = writeJob(dir, 'litellm', [dead, proxy.url], ITEMS);
    videoSha = createHash('sha256').update(upstream.video).digest('hex');
  });
  after(async () => {
    await proxy?.stop();
    await gateway?.stop();
    await upstream?.stop();
    await temporal?.stop();
  });

  it('doctor passes the job: the dead primary is a warning, the gateway serves /v1/videos and Messages', async () => {
    const result = await run(['doctor', job]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.doesNotMatch(result.stdout, /^FAIL/m, result.stdout);
    assert.match(result.stdout, new RegExp(`^warn\\s+gateway ${dead} \\(primary\\): .*connection refused`, 'm'), result.stdout);
    assert.match(result.stdout, new RegExp(`^ok\\s+gateway ${proxy.url} \\(alternate 1\\)`, 'm'), result.stdout);
    assert.match(result.stdout, /^ok\s+messages: /m, result.stdout);
    assert.equal(upstream.createCount(), 0, 'doctor creates nothing');
  });

  it('a model not in the catalog: run exits 2 before any paid call, naming the model, its line and the closest names', async () => {
    const messagesBefore = upstreamMessages(upstream);
    const wrong = writeGatewayJob(dir, {
      name: 'litellm-wrong-model',
      baseUrls: [dead, proxy.url],
      defaults: ['model: veo-3.1-fast-hd', 'protocol: openai', 'seconds: "4"', 'size: 1280x720'],
      items: [{ id: 'never', prompt: 'never rendered' }],
    });
    const result = await run(['run', wrong]);
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.match(
      result.stderr,
      /model "veo-3.1-fast-hd" is not in the gateway's catalog for this key \(GET \/v1\/models on http:\/\/127\.0\.0\.1:\d+ lists 3 models\)/,
    );
    assert.match(result.stderr, /litellm-wrong-model\.yaml:8:10 \(defaults\.model\); closest in the catalog: veo-3.1-fast-generate-001, /);
    assert.equal(upstream.createCount(), 0, 'no create reached the upstream');
    assert.equal(upstreamMessages(upstream), messagesBefore, 'no Messages call reached the upstream');
    const doctor = await run(['doctor', wrong]);
    assert.equal(doctor.code, 2, doctor.stdout);
    assert.match(doctor.stdout, /^FAIL\s+model veo-3.1-fast-hd: model "veo-3.1-fast-hd" is not in the gateway's catalog/m);
  });

  it('runs the job: enhanced through Messages, past the dead primary; the lost create ends unknown, one paid create per item', async (t) => {
    // doctor's check made one Messages call of its own.
    const messages = upstreamMessages(upstream);
    const result = await run(['run', job]);
    assert.equal(result.code, 1, `one item ends unknown:\n${result.stdout}${result.stderr}`);
    assert.match(result.stdout, /litellm: 2 of 3 succeeded/);
    assert.match(result.stdout, /unknown\s+#3 lost/);
    assert.deepEqual(proxy.lost, [LOSE_SAFE], 'the proxy lost exactly the marked create answer');
    // One video was cut off halfway; LiteLLM ignores Range, so the retry had the whole file again.
    assert.equal(proxy.cut.length, 1, 'a download was cut short');

    const out = join(dir, 'out');
    const rows = manifestRows(out);
    for (const id of ['cliff', 'stairs']) {
      const row = rowOf(rows, id, 'succeeded');
      assert.equal(row.enhanced_prompt, enhanced(ITEMS[id as keyof typeof ITEMS]));
      // One paid create per item, of the prompt Messages rewrote.
      assert.equal(upstream.createsFor(enhanced(ITEMS[id as keyof typeof ITEMS])), 1, id);
      // The bytes stored are the bytes the upstream served.
      assert.equal(sha256File(join(out, row.file!)), videoSha, id);
      assert.equal(row.sha256, videoSha);
      assert.equal(row.bytes, upstream.video.length);
      // LiteLLM's 130-character ids, kept whole.
      assert.ok((row.task_id ?? '').length > 120, `task id ${row.task_id}`);
      // Past the dead primary, everything went through the gateway (behind the proxy).
      assert.equal(row.create_base_url, proxy.url);
      assert.equal(row.download_base_url, proxy.url);
      // LiteLLM's own price for the create (x-litellm-response-cost): $0.10 a second, 4 s.
      assert.deepEqual([row.cost_usd, row.cost_source], [0.4, 'billed'], id);
    }
    // The job gives no price: run read LiteLLM's own (GET /v1/model/info, $0.10 a second for gemini/veo-3.1-fast-generate-001),
    // so the 3 creates were estimated at $1.20, and the lost one counts as spent at its estimate. The
    // rewrites are priced from the usage LiteLLM passed through, at its published claude prices.
    const rewrites = [...rows.values()].map((row) => [row.rewrite_cost_source, (row.rewrite_cost_usd ?? 0) > 0]);
    assert.deepEqual(
      rewrites,
      [...rows.values()].map(() => ['usage', true]),
    );
    assert.match(result.stdout, /spent: {4}\$1\.20 \(\$0\.80 billed, \$0\.000\d+ from usage, \$0\.40 estimated\) of \$1\.20 estimated/);
    // The gateway created (and the upstream billed) the render whose answer was lost: it ends
    // unknown, and reelflow does not create it again on its own.
    const lost = rowOf(rows, 'lost', 'unknown');
    t.diagnostic(`lost create: ${lost.error?.kind}: ${lost.error?.message}`);
    t.diagnostic(
      `cut: ${proxy.cut.join(', ')}; through the proxy with Range: ${proxy.passed.filter((p) => p.includes('(')).join(', ') || 'none'}`,
    );
    assert.equal(lost.file, null);
    assert.deepEqual([lost.cost_usd, lost.cost_source], [0.4, 'estimated'], 'an ambiguous create counts at the price LiteLLM publishes');
    assert.equal(upstream.createsFor(enhanced(ITEMS.lost)), 1);
    assert.equal(upstream.createCount(), 3);
    assert.equal(upstreamMessages(upstream) - messages, 3, 'one Messages call per item');
    assert.deepEqual(
      readdirSync(out).filter((f) => f.endsWith('.part')),
      [],
    );
  });

  it('--retry-unknown creates the lost item again, once; then a re-run creates nothing', async () => {
    const messages = upstreamMessages(upstream);
    const retried = await run(['run', job, '--retry-unknown']);
    assert.equal(retried.code, 0, retried.stdout + retried.stderr);
    assert.match(retried.stderr, /litellm: started 1 of 3 item\(s\) \(2 already ended\)/);
    const out = join(dir, 'out');
    const row = rowOf(manifestRows(out), 'lost', 'succeeded');
    assert.equal(sha256File(join(out, row.file!)), videoSha);
    assert.equal(upstream.createsFor(enhanced(ITEMS.lost)), 2, 'the user chose to pay for it again');
    assert.equal(upstream.createsFor(enhanced(ITEMS.cliff)), 1);
    // The item created again sends the rewrite stored with it: no second Messages call (docs/enhance.md).
    assert.equal(upstreamMessages(upstream) - messages, 0, 'the retried item reused its stored rewrite');

    const creates = upstream.createCount();
    const again = await run(['run', job]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stderr, /litellm: nothing to render: all 3 item\(s\) already ended/);
    assert.match(again.stdout, /3 of 3 succeeded/);
    assert.equal(upstream.createCount(), creates, 'no create on a finished job');
  });

  it('a finished video deleted: run again asks the task it has, downloads its video again, creates nothing (docs/reruns.md)', async () => {
    const out = join(dir, 'out');
    const before = rowOf(manifestRows(out), 'cliff', 'succeeded');
    rmSync(join(out, before.file!));
    const creates = upstream.createCount();
    const again = await run(['run', job]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stderr, /litellm: started 1 of 3 item\(s\) \(2 already ended\)/);
    assert.equal(upstream.createCount(), creates, 'no create: the paid task was asked again');
    const after = rowOf(manifestRows(out), 'cliff', 'succeeded');
    assert.equal(after.task_id, before.task_id, 'the same task');
    assert.equal(sha256File(join(out, after.file!)), videoSha);
  });

  it('with retries.create: always, the lost create is created again in the same run and the job succeeds', async () => {
    const prompt = `A storm front over the sea ${LOSE_ALWAYS}`;
    // Another job: an output location of its own (an output location belongs to one job, docs/reruns.md).
    const alwaysDir = join(dir, 'always');
    mkdirSync(alwaysDir);
    const always = writeJob(alwaysDir, 'litellm-always', [dead, proxy.url], { storm: prompt }, ['retries:', '  create: always']);
    const result = await run(['run', always]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.ok(proxy.lost.includes(LOSE_ALWAYS));
    assert.equal(upstream.createsFor(enhanced(prompt)), 2, 'the lost create and the one made again');
    const row = rowOf(manifestRows(join(alwaysDir, 'out')), 'storm', 'succeeded');
    assert.equal(row.sha256, videoSha);
  });

  it('enhance shows the rewrites before any render, one Messages call per item; run renders exactly those; --re-enhance asks again', async () => {
    const items = { pier: 'An old pier in the fog', boat: 'A rowing boat at first light' };
    // An output location of its own (inside the scanned directory): one job per location.
    const own = join(dir, 'enhance');
    mkdirSync(own);
    const shownJob = writeJob(own, 'litellm-enhance', [dead, proxy.url], items);
    const messages = upstreamMessages(upstream);
    const creates = upstream.createCount();
    const shown = await run(['enhance', shownJob, '--json']);
    assert.equal(shown.code, 0, shown.stdout + shown.stderr);
    const rewrites = (JSON.parse(shown.stdout) as { items: Array<{ id: string; enhanced_prompt: string }> }).items;
    assert.deepEqual(
      rewrites.map((r) => [r.id, r.enhanced_prompt]),
      Object.entries(items).map(([id, prompt]) => [id, enhanced(prompt)]),
    );
    assert.equal(upstreamMessages(upstream) - messages, 2);
    assert.equal(upstream.createCount(), creates, 'enhance renders nothing');

    const rendered = await run(['run', shownJob]);
    assert.equal(rendered.code, 0, rendered.stdout + rendered.stderr);
    assert.equal(upstreamMessages(upstream) - messages, 2, 'the renders used the stored rewrites');
    for (const prompt of Object.values(items)) assert.equal(upstream.createsFor(enhanced(prompt)), 1);

    const again = await run(['enhance', shownJob, '--re-enhance', '--json']);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.equal(upstreamMessages(upstream) - messages, 4, '--re-enhance asks once more per item');
  });

  it('the key reached only the gateway: no upstream request, file, log or workflow history holds it', () => {
    assert.deepEqual(upstreamRequestsWithKey(upstream, gateway.key), []);
    // The videos came from the upstream's Gemini file host, through the proxy.
    assert.ok(upstream.requests.some((r) => r.path.startsWith('/v1beta/files/') && r.path.includes(':download')));
    for (const output of outputs) assert.ok(!output.stdout.includes(gateway.key) && !output.stderr.includes(gateway.key));
    assert.deepEqual(filesContaining(dir, gateway.key), []);
    assert.deepEqual(filesContaining(temporal.stateDir, gateway.key), []);
    // The scan reads what it must: the prompts are in the manifest and in the recorded histories.
    assert.ok(filesContaining(dir, ITEMS.stairs).some((f) => f.endsWith('manifest.jsonl')));
    assert.ok(filesContaining(temporal.stateDir, ITEMS.stairs).length > 0, 'the workflow histories are scanned');
  });
});
