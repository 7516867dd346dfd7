// The estimate before anything is sent (docs/costs.md), through the built command as a user runs it:
// `validate` (human and --json), `validate --prices`, `run --dry-run`, and bad prices refused.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../support/cli';
import { tempDir } from '../support/jobs';

// Entries written for this test in the shape of LiteLLM's model_prices_and_context_window.json.
const LITELLM_MAP = JSON.stringify(
  {
    'gemini/veo-3.1-fast-generate-001': { litellm_provider: 'gemini', mode: 'video_generation', output_cost_per_second: 0.1 },
    'claude-sonnet-4-6': { litellm_provider: 'anthropic', mode: 'chat', input_cost_per_token: 3e-6, output_cost_per_token: 1.5e-5 },
  },
  null,
  4,
);

const JOB = `name: costs
gateway:
  base_urls: [http://127.0.0.1:8787]
defaults:
  model: seedance-1-0-pro-250528
  seconds: "5"
pricing_file: litellm.json
pricing:
  seedance-1-0-pro-250528:
    per_second: {720p: 0.05, 1080p: 0.12}
budget:
  max_usd: 1.50
items:
  - {id: a, prompt: one, resolution: 1080p}
  - {id: b, prompt: two, resolution: 720p}
  - {id: c, prompt: three, model: veo-3.1-fast-generate-001, protocol: openai, seconds: "8", size: 1280x720}
  - {id: d, prompt: four, model: kling-v2}
`;

function jobDir(job = JOB): { dir: string; job: string } {
  const dir = tempDir('reelflow-estimate-');
  writeFileSync(join(dir, 'job.yaml'), job);
  writeFileSync(join(dir, 'litellm.json'), LITELLM_MAP);
  return { dir, job: join(dir, 'job.yaml') };
}

const env = { ...process.env, TEMPORAL_ADDRESS: undefined, GATEWAY_API_KEY: undefined };

describe('the estimate before anything is sent', () => {
  it('validate: cost per model and in total, where each price came from, the unpriced model named; refused as run refuses it', async () => {
    const { job } = jobDir();
    const r = await runCli(['validate', job], { env });
    // A budget cannot hold an item it cannot price: run refuses the job, so validate does too (exit 2).
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /run refuses this job: .*kling-v2.*--dry-run/s);
    assert.match(r.stdout, /^estimate: \$1\.65 \(USD\) for 3 of 4 items; 1 without a price, not counted$/m);
    assert.match(r.stdout, /^ +\$0\.85 {2}seedance-1-0-pro-250528: 2 items, price from job file$/m);
    assert.match(
      r.stdout,
      /^ +\$0\.80 {2}veo-3.1-fast-generate-001: 1 item, price from litellm\.json \(gemini\/veo-3\.1-fast-generate-001\)$/m,
    );
    assert.match(r.stdout, /^ +- {2}kling-v2: 1 item$/m);
    assert.match(
      r.stdout,
      /^ {2}no price: kling-v2 \(1 item\): no price for kling-v2; add it to pricing in the job file or a prices file$/m,
    );
    assert.match(r.stdout, /^budget: {3}\$1\.50; the estimate is above it$/m);
  });

  it('validate --json carries the estimate, and the refusal of an unpriced model under a budget', async () => {
    const { job } = jobDir();
    const r = await runCli(['validate', job, '--json'], { env });
    assert.equal(r.code, 2, r.stderr);
    const doc = JSON.parse(r.stdout) as { ok: boolean; errors: { path: string }[]; estimate: Record<string, unknown>; budget: unknown };
    assert.equal(doc.ok, false);
    assert.deepEqual(
      doc.errors.map((e) => e.path),
      ['budget'],
    );
    assert.deepEqual(doc.budget, { max_usd: 1.5 });
    assert.deepEqual(doc.estimate, {
      currency: 'USD',
      total: 1.65,
      per_model: [
        {
          model: 'seedance-1-0-pro-250528',
          role: 'video',
          items: 2,
          priced_items: 2,
          usd: 0.85,
          source: 'job file',
          assumed_seconds: {},
        },
        {
          model: 'veo-3.1-fast-generate-001',
          role: 'video',
          items: 1,
          priced_items: 1,
          usd: 0.8,
          source: 'litellm.json (gemini/veo-3.1-fast-generate-001)',
          assumed_seconds: {},
        },
        { model: 'kling-v2', role: 'video', items: 1, priced_items: 0, usd: 0, source: null, assumed_seconds: {} },
      ],
      unpriced_items: 1,
      unpriced_models: [{ model: 'kling-v2', items: 1, reason: 'no price for kling-v2' }],
    });
  });

  it('validate --prices FILE prices the rest; an enhance model is priced per token', async () => {
    const { dir, job } = jobDir(JOB.replace('items:\n', 'enhance:\n  model: claude-sonnet-4-6\n  max_tokens: 100\nitems:\n'));
    writeFileSync(join(dir, 'mine.json'), JSON.stringify({ 'kling-v2': { output_cost_per_second: 0.07 } }));
    const r = await runCli(['validate', job, '--prices', 'mine.json', '--json'], { env, cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as {
      estimate: { total: number; unpriced_items: number; per_model: Array<{ model: string; role: string; usd: number; source: string }> };
    };
    assert.equal(doc.estimate.unpriced_items, 0);
    const kling = doc.estimate.per_model.find((m) => m.model === 'kling-v2');
    assert.deepEqual([kling?.usd, kling?.source], [0.35, 'mine.json (kling-v2)']);
    // Four rewrites: about 1 input token a prompt (3 bytes or fewer... each short prompt), 100 output tokens at $15/M.
    const enhance = doc.estimate.per_model.find((m) => m.role === 'enhance');
    assert.equal(enhance?.model, 'claude-sonnet-4-6');
    assert.equal(enhance?.source, 'litellm.json (claude-sonnet-4-6)');
    assert.ok(enhance && enhance.usd > 4 * 100 * 15e-6 && enhance.usd < 4 * 100 * 15e-6 + 0.0001, String(enhance?.usd));
    assert.equal(doc.estimate.total, Math.round((1.65 + 0.35 + (enhance?.usd ?? 0)) * 1e6) / 1e6);
  });

  it('run --dry-run prints the same summary and sends nothing', async () => {
    const { job } = jobDir();
    const r = await runCli(['run', job, '--dry-run'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^estimate: \$1\.65 \(USD\) for 3 of 4 items; 1 without a price, not counted$/m);
    assert.match(r.stdout, /^ {2}no price: kling-v2 \(1 item\)/m);
    const json = await runCli(['run', job, '--dry-run', '--json'], { env });
    assert.equal(json.code, 0, json.stderr);
    const doc = JSON.parse(json.stdout) as { estimate: { total: number; unpriced_models: Array<{ model: string }> }; budget: unknown };
    assert.equal(doc.estimate.total, 1.65);
    assert.deepEqual(
      doc.estimate.unpriced_models.map((m) => m.model),
      ['kling-v2'],
    );
    assert.deepEqual(doc.budget, { max_usd: 1.5 });
    writeFileSync(join(dirname(job), 'mine.json'), JSON.stringify({ 'kling-v2': { output_cost_per_second: 0.07 } }));
    const priced = await runCli(['run', job, '--dry-run', '--prices', join(dirname(job), 'mine.json')], { env });
    assert.equal(priced.code, 0, priced.stderr);
    assert.match(priced.stdout, /^estimate: \$2\.00 \(USD\) for 4 of 4 items$/m);
  });

  it('bad prices are refused with file:line:column and what is allowed; nothing is started', async () => {
    const { job } = jobDir(JOB.replace('per_second: {720p: 0.05, 1080p: 0.12}', 'per_second: {720p: -0.05, full-hd: 0.12}'));
    const r = await runCli(['validate', job], { env });
    assert.equal(r.code, 2);
    assert.ok(
      r.stderr.includes(
        `${job}:10:24: pricing.seedance-1-0-pro-250528.per_second.720p: a per-resolution price must be a price in USD: a number 0 or more, such as 0.10, got -0.05`,
      ),
      r.stderr,
    );
    assert.ok(
      r.stderr.includes(
        `${job}:10:40: pricing.seedance-1-0-pro-250528.per_second.full-hd: "full-hd" is not a resolution: per_second is by resolution such as 480p, 720p, 1080p, 2k or 4k`,
      ),
      r.stderr,
    );
    assert.match(r.stderr, /2 problems; nothing was started/);
    const json = await runCli(['validate', job, '--json'], { env });
    assert.equal(json.code, 2);
    const doc = JSON.parse(json.stdout) as {
      ok: boolean;
      estimate: unknown;
      budget: unknown;
      errors: Array<{ line: number; column: number }>;
    };
    assert.deepEqual([doc.ok, doc.estimate, doc.budget], [false, null, null]);
    assert.deepEqual(
      doc.errors.map((e) => `${e.line}:${e.column}`),
      ['10:24', '10:40'],
    );
    const run = await runCli(['run', job, '--dry-run'], { env });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /is not a valid job file \(2 problems\)/);
  });

  it('a bad price in a LiteLLM-format file is refused at its line in that file', async () => {
    const { dir, job } = jobDir();
    writeFileSync(join(dir, 'litellm.json'), LITELLM_MAP.replace('"output_cost_per_second": 0.1', '"output_cost_per_second": "0.1"'));
    const r = await runCli(['validate', job], { env });
    assert.equal(r.code, 2);
    assert.ok(
      r.stderr.includes(
        `${join(dir, 'litellm.json')}:5:35: gemini/veo-3.1-fast-generate-001.output_cost_per_second must be a price in USD: a number 0 or more, such as 0.10, got "0.1"`,
      ),
      r.stderr,
    );
  });
});
