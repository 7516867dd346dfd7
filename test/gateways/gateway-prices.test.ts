// The gateway's own prices, end to end (docs/costs.md, "Prices the gateway publishes"): reelflow (the built CLI, a real
// Temporal dev server) through the real LiteLLM 1.106.2 and the real new-api v0.10.0, in front of
// the fake upstream, with a job file that names no price. `doctor` and `run --dry-run` estimate with
// what the gateway publishes and say where each price came from; a run under a budget holds to
// those prices; and what the manifest records is what the gateway charged: LiteLLM's billed figure
// per create, new-api's quota used by the key (GET /api/usage/token/, in its quota per unit).
// Each gateway is started once for the file. Build first: bash scripts/build.sh
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { runCli, type CliResult } from '../support/cli';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { GATEWAY_MODELS, manifestRows, rowOf, startLiteLLM, startNewApi, writeGatewayJob, type Gateway } from '../support/gateways';
import { tempDir } from '../support/jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

interface ModelEstimate {
  model: string;
  role: string;
  items: number;
  priced_items: number;
  usd: number;
  source: string | null;
}
interface Estimate {
  total: number;
  per_model: ModelEstimate[];
  unpriced_items: number;
}
interface GatewayPrices {
  base: string | null;
  gateway: string | null;
  asked: string[];
  priced: string[];
}

function rowFor(estimate: Estimate, model: string, role = 'video'): ModelEstimate {
  const row = estimate.per_model.find((m) => m.model === model && m.role === role);
  assert.ok(row, `${role} ${model} not in ${JSON.stringify(estimate)}`);
  return row;
}

function assertNoKey(result: CliResult, key: string): void {
  assert.ok(!result.stdout.includes(key) && !result.stderr.includes(key), 'the key is in the output');
}

describe('prices the gateway publishes: doctor, run --dry-run, a run under a budget', { timeout: 600_000 }, () => {
  let temporal: TestTemporal;
  let upstream: FakeUpstream;
  before(async () => {
    [temporal, upstream] = await Promise.all([startTestTemporal(), startFakeUpstream({ renderMs: 1000 })]);
  });
  after(async () => {
    await upstream?.stop();
    await temporal?.stop();
  });

  describe('LiteLLM 1.106.2: /v1/model/info (its bundled cost map), billed per create', () => {
    let gateway: Gateway;
    let env: NodeJS.ProcessEnv;
    let dir: string;
    let job: string;
    before(async () => {
      gateway = await startLiteLLM(upstream);
      env = { ...temporal.env, GATEWAY_API_KEY: gateway.key };
      dir = tempDir('reelflow-litellm-prices-');
      job = writeGatewayJob(dir, {
        name: 'litellm-prices',
        baseUrls: [gateway.url],
        defaults: [`model: ${GATEWAY_MODELS.openai}`, 'protocol: openai', 'seconds: "4"', 'size: 1280x720'],
        items: [
          { id: 'one', prompt: 'A lighthouse at dusk' },
          { id: 'two', prompt: 'A keeper on the stairs' },
        ],
        extra: ['budget:', '  max_usd: 5'],
      });
    });
    after(async () => {
      await gateway?.stop();
    });

    it('doctor --json: Veo 3.1 Fast at $0.10 a second and the Messages model per token, from the gateway, named as such', async () => {
      // The doctor's probes allow 5 s each: a proxy's first answers after its start are slower than that on a loaded machine.
      await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${gateway.key}` } });
      const result = await runCli(['doctor', job, '--json'], { env });
      assertNoKey(result, gateway.key);
      const doc = JSON.parse(result.stdout) as {
        checks: Array<{ name: string; status: string }>;
        estimate: Estimate;
        gateway_prices: GatewayPrices;
        budget: unknown;
      };
      assert.equal(doc.checks.find((c) => c.name === 'cost')?.status, 'ok', result.stdout);
      const veo = rowFor(doc.estimate, GATEWAY_MODELS.openai);
      assert.deepEqual([veo.items, veo.priced_items, veo.usd], [2, 2, 0.8]);
      assert.equal(veo.source, `gateway ${gateway.url} (/v1/model/info, gemini/veo-3.1-fast-generate-001)`);
      const rewrites = rowFor(doc.estimate, GATEWAY_MODELS.messages, 'enhance');
      assert.equal(rewrites.priced_items, 2);
      assert.match(rewrites.source ?? '', /\/v1\/model\/info, /);
      assert.equal(doc.estimate.unpriced_items, 0);
      assert.deepEqual(doc.gateway_prices, {
        base: gateway.url,
        gateway: 'litellm',
        asked: [GATEWAY_MODELS.messages, GATEWAY_MODELS.openai],
        priced: [GATEWAY_MODELS.messages, GATEWAY_MODELS.openai],
        notes: [],
      });
      assert.deepEqual(doc.budget, { max_usd: 5 });
      assert.equal(upstream.createCount(), 0, 'doctor creates nothing');
    });

    it('run --dry-run says the same, in words; the job file price wins over the gateway', async () => {
      const result = await runCli(['run', job, '--dry-run'], { env });
      assertNoKey(result, gateway.key);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.match(
        result.stdout,
        /\$0\.80 {2}veo-3\.1-fast-generate-001: 2 items, price from gateway http:\/\/127\.0\.0\.1:\d+ \(\/v1\/model\/info, gemini\/veo-3\.1-fast-generate-001\)/,
      );
      assert.match(result.stdout, /^gateway prices: claude-sonnet-4-6, veo-3\.1-fast-generate-001, from litellm at /m);
      const own = writeGatewayJob(dir, {
        name: 'litellm-own-price',
        baseUrls: [gateway.url],
        defaults: [`model: ${GATEWAY_MODELS.openai}`, 'protocol: openai', 'seconds: "4"', 'size: 1280x720'],
        items: [{ id: 'one', prompt: 'A lighthouse at dusk' }],
        extra: ['pricing:', `  ${GATEWAY_MODELS.openai}:`, '    per_second: 0.25'],
      });
      const json = await runCli(['run', own, '--dry-run', '--json'], { env });
      assert.equal(json.code, 0, json.stdout + json.stderr);
      const doc = JSON.parse(json.stdout) as { estimate: Estimate; gateway_prices: GatewayPrices };
      assert.deepEqual(
        [rowFor(doc.estimate, GATEWAY_MODELS.openai).usd, rowFor(doc.estimate, GATEWAY_MODELS.openai).source],
        [1, 'job file'],
      );
      assert.deepEqual(doc.gateway_prices.asked, [GATEWAY_MODELS.messages], 'only the model the job file leaves unpriced is asked');
    });

    it('a run under a budget priced by the gateway: each row billed what the gateway charged, the estimate', async () => {
      const dry = await runCli(['run', job, '--dry-run', '--json'], { env });
      const rewritesEstimate = rowFor((JSON.parse(dry.stdout) as { estimate: Estimate }).estimate, GATEWAY_MODELS.messages, 'enhance').usd;
      const result = await runCli(['run', job], { env });
      assertNoKey(result, gateway.key);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.match(result.stderr, /estimate: \$0\.8\d? \(USD\) for 2 of 2 items/);
      const rows = manifestRows(`${dir}/out`);
      for (const id of ['one', 'two']) {
        const row = rowOf(rows, id, 'succeeded');
        // x-litellm-response-cost: what LiteLLM recorded for the create, from the same cost map.
        assert.deepEqual([row.cost_usd, row.cost_source], [0.4, 'billed'], JSON.stringify(row));
      }
      assert.match(result.stdout, /^ {2}veo-3\.1-fast-generate-001: \$0\.80 \(\$0\.80 billed, \$0\.00 estimated\) of \$0\.80 estimated$/m);
      // The rewrites, reserved at their estimate (an upper bound: max_tokens each), are recorded at
      // what LiteLLM passed on of the upstream's answer: its usage (12 input and 9 output tokens,
      // OBSERVED.md) at the prices LiteLLM publishes for the model ($3 and $15 per million).
      for (const id of ['one', 'two']) {
        const row = rowOf(rows, id, 'succeeded');
        assert.deepEqual([row.rewrite_cost_usd, row.rewrite_cost_source], [0.000171, 'usage'], JSON.stringify(row));
      }
      assert.ok(0.000171 * 2 < rewritesEstimate, `the usage is below the estimate ${rewritesEstimate}`);
      assert.match(
        result.stdout,
        /^ {2}claude-sonnet-4-6: \$0\.00034 \(\$0\.00 billed, \$0\.00034 from usage, \$0\.00 estimated\) of \$0\.0031 estimated$/m,
      );
    });
  });

  describe('new-api v0.10.0: /api/pricing (its ModelPrice), charged in quota to the key', () => {
    let gateway: Gateway;
    let env: NodeJS.ProcessEnv;
    let dir: string;
    let job: string;
    const usedUsd = async (): Promise<number> => {
      const usage = (await (
        await fetch(`${gateway.url}/api/usage/token/`, { headers: { authorization: `Bearer ${gateway.key}` } })
      ).json()) as { data: { total_used: number } };
      const status = (await (await fetch(`${gateway.url}/api/status`)).json()) as { data: { quota_per_unit: number } };
      return usage.data.total_used / status.data.quota_per_unit;
    };
    before(async () => {
      gateway = await startNewApi(upstream);
      env = { ...temporal.env, GATEWAY_API_KEY: gateway.key };
      dir = tempDir('reelflow-new-api-prices-');
      job = writeGatewayJob(dir, {
        name: 'new-api-prices',
        baseUrls: [gateway.url],
        defaults: [`model: ${GATEWAY_MODELS.openai}`, 'protocol: openai', 'size: 1280x720'],
        items: [
          { id: 'seedance', prompt: 'A keeper on the stairs', model: GATEWAY_MODELS.general, protocol: 'general' },
          { id: 'veo', prompt: 'A lighthouse at dusk' },
        ],
        extra: ['budget:', '  max_usd: 5'],
      });
      // The Veo item (the last) renders 8 s: new-api charges a Gemini-channel task its price per call, whatever the length.
      appendFileSync(job, '    seconds: "8"\n');
    });
    after(async () => {
      await gateway?.stop();
    });

    it('doctor --json: per video for its Gemini (Veo) and Seedance channels, per call for Messages', async () => {
      const result = await runCli(['doctor', job, '--json'], { env });
      assertNoKey(result, gateway.key);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      const doc = JSON.parse(result.stdout) as { estimate: Estimate; gateway_prices: GatewayPrices };
      const source = `gateway ${gateway.url} (/api/pricing)`;
      assert.deepEqual(
        [rowFor(doc.estimate, GATEWAY_MODELS.openai).usd, rowFor(doc.estimate, GATEWAY_MODELS.openai).source],
        [0.01, source],
      );
      assert.deepEqual(
        [rowFor(doc.estimate, GATEWAY_MODELS.general).usd, rowFor(doc.estimate, GATEWAY_MODELS.general).source],
        [0.01, source],
      );
      assert.deepEqual(
        [rowFor(doc.estimate, GATEWAY_MODELS.messages, 'enhance').usd, rowFor(doc.estimate, GATEWAY_MODELS.messages, 'enhance').source],
        [0.02, source],
      );
      assert.equal(doc.estimate.total, 0.04);
      assert.equal(doc.gateway_prices.gateway, 'new-api');
    });

    it('a run under the budget: the manifest and the estimate match the quota new-api charged the key', async () => {
      const dry = await runCli(['run', job, '--dry-run', '--json'], { env });
      assert.equal(dry.code, 0, dry.stdout + dry.stderr);
      const estimate = (JSON.parse(dry.stdout) as { estimate: Estimate }).estimate;
      const before = await usedUsd();
      const result = await runCli(['run', job], { env });
      assertNoKey(result, gateway.key);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      const charged = Math.round(((await usedUsd()) - before) * 1e6) / 1e6;
      // Two creates ($0.01 each) and two rewrites ($0.01 each): the estimate is what was charged.
      assert.equal(charged, estimate.total);
      const rows = manifestRows(`${dir}/out`);
      const veo = rowOf(rows, 'veo', 'succeeded');
      const seedance = rowOf(rows, 'seedance', 'succeeded');
      // new-api tells the key no cost per task (OBSERVED.md): the rows are its published price, estimated.
      assert.deepEqual([veo.cost_usd, veo.cost_source], [0.01, 'estimated']);
      assert.deepEqual([seedance.cost_usd, seedance.cost_source], [0.01, 'estimated']);
      // Each rewrite at new-api's per-call price, as charged: the rows hold the whole spend.
      assert.deepEqual([veo.rewrite_cost_usd, seedance.rewrite_cost_usd], [0.01, 0.01]);
      assert.equal(
        Math.round((veo.cost_usd! + seedance.cost_usd! + veo.rewrite_cost_usd! + seedance.rewrite_cost_usd!) * 1e6) / 1e6,
        charged,
      );
    });
  });
});
