// Prices on the worker's side (docs/costs.md): a job with a pricing_file is planned from its stored
// inputs after its folder is gone (the prices file is stored like items_from), and the price table
// stays out of the settings every activity receives; the budget travels with them. A job no `run`
// priced (a schedule's run) is priced by its worker with the gateway's published prices (the
// simulator over HTTP publishes them), and the prices each run used are recorded beside the manifest.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { preparePlan, readPlanItems, type PreparedJob } from '../../../activities/plan';
import type { PriceTable } from '../../../jobfile/prices';
import { FailureType } from '../../../domain/failures';
import { loadJobFile } from '../../../jobfile';
import { recordingFiles, storeJobInputs } from '../../../storage/inputs/publish';
import { openStorage } from '../../../storage';
import { RewriteStore, rewriteRecord } from '../../../storage/records/rewrites';
import { readJobPrices } from '../../../storage/records/job-prices';
import { startSimulator } from '../../../sim';
import { tempDir } from '../../support/jobs';
import { acceptKeylessJobsInThisWorker } from '../../../activities/job-key-check';

// The jobs here are built by the test, with no starter's key fingerprint: this process carries them as a
// worker started with --accept-keyless-jobs does (docs/keys.md).
acceptKeylessJobsInThisWorker(true);

const cacheDir = tempDir('reelflow-prices-cache-');
process.env.REELFLOW_INPUTS_CACHE = cacheDir;
const cleanup: string[] = [cacheDir];
after(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function writeJobDir(): { dir: string; jobFile: string } {
  const dir = tempDir('reelflow-prices-job-');
  cleanup.push(dir);
  writeFileSync(
    join(dir, 'prices.json'),
    JSON.stringify({ 'gemini/veo-3.1-fast-generate-001': { output_cost_per_video_per_second: 0.1 } }),
  );
  const jobFile = join(dir, 'priced.yaml');
  writeFileSync(
    jobFile,
    [
      'name: priced',
      'gateway:',
      '  base_urls: [http://127.0.0.1:9]',
      'defaults:',
      '  model: veo-3.1-fast-generate-001',
      '  protocol: openai',
      '  seconds: "8"',
      'pricing_file: prices.json',
      'budget:',
      '  max_usd: 20',
      'items:',
      '  - prompt: one',
      '  - prompt: two',
      'output:',
      `  dir: ${join(dir, 'out')}`,
      '',
    ].join('\n'),
  );
  return { dir, jobFile };
}

/** The job's first page (up to 10 items), as its workflow asks for it; `prices`: JobInput.prices. */
function firstPage(jobFile: string, prepared: PreparedJob, prices?: PriceTable) {
  return readPlanItems({
    jobFile,
    runDate: '2026-03-01',
    digest: prepared.digest,
    offset: 0,
    limit: 10,
    retryStates: [],
    output: prepared.settings.output,
    ...(prices ? { prices } : {}),
  });
}

describe('prices on the worker', () => {
  it('the settings carry the budget, not the price table', async () => {
    const { jobFile } = writeJobDir();
    const prepared = await preparePlan({ jobFile, runDate: '2026-03-01', startedAt: Date.now() });
    assert.deepEqual(prepared.settings.budget, { maxUsd: 20 });
    assert.equal('pricing' in prepared.settings, false);
  });

  it('a job with a pricing_file is planned from its stored inputs after its folder is gone', async () => {
    const { dir, jobFile } = writeJobDir();
    const reads = recordingFiles();
    const loaded = await loadJobFile(jobFile, { runDate: '2026-03-01', files: reads });
    assert.ok(loaded.ok, loaded.ok ? '' : JSON.stringify(loaded.errors));
    assert.deepEqual(loaded.plan.pricing, {
      'veo-3.1-fast-generate-001': { source: 'prices.json (gemini/veo-3.1-fast-generate-001)', perSecond: 0.1 },
    });
    assert.deepEqual(
      [...reads.texts.keys()].sort(),
      [join(dir, 'prices.json'), jobFile].sort(),
      'the job file and the prices file were read',
    );
    const storeDir = tempDir('reelflow-prices-store-');
    cleanup.push(storeDir);
    const stored = await storeJobInputs(loaded.plan, reads.texts, { kind: 'dir', dir: storeDir });
    assert.equal(stored.published.files, 2);
    rmSync(dir, { recursive: true, force: true });
    const prepared = await preparePlan({ jobFile, runDate: '2026-03-01', startedAt: Date.now(), inputs: stored.ref });
    assert.equal(prepared.itemCount, 2);
    assert.deepEqual(prepared.settings.budget, { maxUsd: 20 });
  });

  it('run --budget wins; the spend of earlier runs is read from the manifest; each page item carries its estimate', async () => {
    const { dir, jobFile } = writeJobDir();
    mkdirSync(join(dir, 'out'));
    const row = (key: string, cost: Record<string, unknown>) =>
      JSON.stringify({
        key,
        id: null,
        index: 1,
        state: 'failed',
        model: 'veo-3.1-fast-generate-001',
        protocol: 'openai',
        prompt: key,
        task_id: null,
        base_url: null,
        created_at: null,
        finished_at: '2026-03-01T00:00:00.000Z',
        polls: 0,
        file: null,
        bytes: null,
        sha256: null,
        error: null,
        ...cost,
      });
    // Two runs of one item and a row from before costs were recorded.
    writeFileSync(
      join(dir, 'out', 'manifest.jsonl'),
      [row('x', { cost_usd: 0.8, cost_source: 'billed' }), row('x', { cost_usd: 0.4, cost_source: 'estimated' }), row('y', {})].join('\n') +
        '\n',
    );
    const prepared = await preparePlan({ jobFile, runDate: '2026-03-01', startedAt: Date.now(), budgetUsd: 5 });
    assert.deepEqual(prepared.settings.budget, { maxUsd: 5 });
    assert.equal(prepared.spentUsd, 1.2);
    const page = await firstPage(jobFile, prepared);
    assert.deepEqual(
      page.items.map((item) => item.estimateUsd),
      [0.8, 0.8],
      '8 s at $0.10 a second',
    );
  });

  it('refuses a job under a budget whose model has no price, naming the model', async () => {
    const { dir, jobFile } = writeJobDir();
    writeFileSync(join(dir, 'prices.json'), JSON.stringify({ 'gemini/veo-3.1-generate-001': { output_cost_per_video_per_second: 0.3 } }));
    await assert.rejects(preparePlan({ jobFile, runDate: '2026-03-01', startedAt: Date.now() }), (error: Error & { type?: string }) => {
      assert.equal(error.type, FailureType.budgetUnpriced);
      assert.match(
        error.message,
        /a budget is set and these models have no price: veo-3.1-fast-generate-001 \(no price for veo-3.1-fast-generate-001\)/,
      );
      return true;
    });
    // Without a budget the same job plans: the estimate names what is unpriced (validate, --dry-run).
    writeFileSync(jobFile, readFileSync(jobFile, 'utf8').replace('budget:\n  max_usd: 20\n', ''));
    const prepared = await preparePlan({ jobFile, runDate: '2026-03-01', startedAt: Date.now() });
    assert.equal(prepared.spentUsd, undefined);
  });

  it("the prices run priced the job with (the gateway's) win on the worker; an unstored rewrite of a priced enhance model is estimated", async () => {
    const { jobFile } = writeJobDir();
    // The job file prices nothing itself now, and enhances prompts with a model only the gateway prices.
    writeFileSync(
      jobFile,
      readFileSync(jobFile, 'utf8')
        .replace('pricing_file: prices.json\n', '')
        .replace('items:', 'enhance:\n  model: claude-sonnet-4-6\n  max_tokens: 100\nitems:'),
    );
    const input = { jobFile, runDate: '2026-03-01', startedAt: Date.now() };
    await assert.rejects(
      preparePlan(input),
      /these models have no price: claude-sonnet-4-6 \(no price for claude-sonnet-4-6\), veo-3.1-fast-generate-001/,
    );
    const prices = {
      'veo-3.1-fast-generate-001': { source: 'gateway http://g (/api/pricing)', perSecond: 0.01 },
      'claude-sonnet-4-6': { source: 'gateway http://g (/api/pricing)', perCall: 0.01 },
    };
    const prepared = await preparePlan({ ...input, prices });
    const loaded = await loadJobFile(jobFile, { runDate: '2026-03-01' });
    assert.ok(loaded.ok && loaded.plan.enhance);
    // The first item's rewrite of this prompt is stored already: nothing to reserve for it.
    await new RewriteStore(openStorage(prepared.settings.output)).put(
      rewriteRecord({
        key: loaded.plan.items[0]!.key,
        prompt: 'one',
        enhance: loaded.plan.enhance,
        rewrite: 'One, at dusk.',
        model: 'claude',
      }),
    );
    const page = await firstPage(jobFile, prepared, prices);
    // Every page of an enhancing job carries the rewrite an item will pay for: its row records it,
    // and a budget reserves it. Without a price for the enhance model there is nothing to carry.
    assert.deepEqual(
      page.items.map((item) => [item.estimateUsd, item.rewriteEstimateUsd]),
      [
        [0.08, undefined],
        [0.08, 0.01],
      ],
    );
    // The enhance model's prices travel with each item, the stored one's too (its record may be gone by
    // the time it runs): the enhance activity prices the answer with them.
    assert.deepEqual(
      page.items.map((item) => item.rewritePrice),
      [{ perCall: 0.01 }, { perCall: 0.01 }],
    );
    const perToken = { ...prices, 'claude-sonnet-4-6': { source: 'job file', perMillionInputTokens: 3, perMillionOutputTokens: 15 } };
    assert.deepEqual((await firstPage(jobFile, prepared, perToken)).items[1]!.rewritePrice, {
      perMillionInputTokens: 3,
      perMillionOutputTokens: 15,
    });
    const unpricedRewrites = await firstPage(jobFile, prepared, { 'veo-3.1-fast-generate-001': prices['veo-3.1-fast-generate-001'] });
    assert.deepEqual(
      unpricedRewrites.items.map((item) => [item.rewriteEstimateUsd, item.rewritePrice]),
      [
        [undefined, undefined],
        [undefined, undefined],
      ],
    );
  });

  it("a job no run priced: its worker reads the gateway's prices beneath the job file's, prices its pages with them and records them", async () => {
    const sim = await startSimulator({ publishedPrices: { 'kling-v2-1': 0.5, 'veo-3.1-fast-generate-001': 0.07 } });
    try {
      const { dir, jobFile } = writeJobDir();
      // veo-3.1-fast-generate-001 is priced by the prices file (it wins over the gateway's $0.07); kling-v2-1 by the gateway alone.
      writeFileSync(
        jobFile,
        readFileSync(jobFile, 'utf8')
          .replace('http://127.0.0.1:9', sim.urls[0]!)
          .replace('  - prompt: two', '  - prompt: two\n    model: kling-v2-1\n    protocol: general\n    seconds: "5"'),
      );
      const asked = () => sim.stats().requests['GET /api/pricing'] ?? 0;
      const prepared = await preparePlan({ jobFile, runDate: '2026-03-01', startedAt: Date.now() });
      const gateway = `gateway ${sim.urls[0]} (/api/pricing)`;
      assert.deepEqual(prepared.prices, {
        'veo-3.1-fast-generate-001': { source: 'prices.json (gemini/veo-3.1-fast-generate-001)', perSecond: 0.1 },
        'kling-v2-1': { source: gateway, perVideo: 0.5, perCall: 0.5 },
      });
      assert.deepEqual(prepared.priceSources, {
        'veo-3.1-fast-generate-001': 'prices.json (gemini/veo-3.1-fast-generate-001)',
        'kling-v2-1': gateway,
      });
      assert.equal(asked(), 1);
      const page = await firstPage(jobFile, prepared, prepared.prices);
      assert.deepEqual(
        page.items.map((item) => item.estimateUsd),
        [0.8, 0.5],
      );
      assert.deepEqual(await readJobPrices(openStorage(prepared.settings.output)), prepared.prices);
      // A job `run` priced (its JobInput.prices) is not priced again by its worker.
      const priced = await preparePlan({ jobFile, runDate: '2026-03-01', startedAt: Date.now(), prices: prepared.prices });
      assert.deepEqual([priced.prices, asked()], [undefined, 1]);
      // A record the worker may not write (here a link where it belongs: storage/objects/safe-path.ts) is
      // logged, and no reason to fail the run.
      const record = join(dir, 'out', '.reelflow', 'prices.json');
      const elsewhere = join(dir, 'elsewhere.json');
      writeFileSync(elsewhere, 'untouched');
      rmSync(record);
      symlinkSync(elsewhere, record);
      const warned: Array<Record<string, unknown> | undefined> = [];
      const logger = new DefaultLogger('WARN', (entry) => warned.push(entry.meta));
      const again = (await new MockActivityEnvironment({}, { logger }).run(preparePlan, {
        jobFile,
        runDate: '2026-03-01',
        startedAt: Date.now(),
      })) as PreparedJob;
      assert.deepEqual(
        warned.map((meta) => meta?.event),
        ['job.prices_not_recorded'],
      );
      assert.deepEqual(again.prices, prepared.prices);
      assert.equal(readFileSync(elsewhere, 'utf8'), 'untouched');
    } finally {
      await sim.close();
    }
  });
});
