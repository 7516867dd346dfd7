// The enhance activity (activities/render.ts enhancePrompt) with a real gateway client, the real
// simulator over HTTP (its stats count Messages calls) and a real output directory; Temporal's
// MockActivityEnvironment gives it an activity context. A retried attempt, a later run, another
// worker: one Messages call per item per prompt text.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { closeActivityResources } from '../../../activities/context';
import { enhancePrompt } from '../../../activities/render';
import type { EnhanceSettings, JobSettings } from '../../../jobfile/plan';
import { estimateEnhanceUsd, type RewritePrice } from '../../../jobfile/prices';
import { rewriteId } from '../../../storage/records/rewrites';
import { startSimulator, type SimHandleExt } from '../../../sim';
import { messageUsage, replyFor } from '../../../sim/messages';
import { filesContaining } from '../../support/gateways';
import { tempDir } from '../../support/jobs';
import { acceptKeylessJobsInThisWorker } from '../../../activities/job-key-check';

// The jobs here are built by the test, with no starter's key fingerprint: this process carries them as a
// worker started with --accept-keyless-jobs does (docs/keys.md).
acceptKeylessJobsInThisWorker(true);

const KEY = 'sk-test-enhance-activity-000000';
process.env.GATEWAY_API_KEY = KEY; // loopback: sent without asking (docs/keys.md)
const ENHANCE: EnhanceSettings = { model: 'claude-sonnet-4-6', maxTokens: 300, system: 'One cinematic shot.' };

function settings(sim: SimHandleExt, dir: string, enhance: EnhanceSettings = ENHANCE): JobSettings {
  return {
    job: 'enhance-activity',
    gateway: { baseUrls: sim.urls, apiKeyEnv: 'GATEWAY_API_KEY', requestTimeoutMs: 5_000 },
    concurrency: { maxInFlight: 2 },
    polling: { initialMs: 1_000, maxMs: 1_000, timeoutMs: 60_000 },
    retries: { create: 'safe', download: 1 },
    output: { storage: 'local', dir },
    enhance,
  };
}

/** One attempt of the activity, as a worker runs it for a workflow from before priced rewrites (a string). */
const attempt = async (input: Parameters<typeof enhancePrompt>[0]): Promise<string> => {
  const answer = await new MockActivityEnvironment().run(enhancePrompt, input);
  assert.equal(typeof answer, 'string', 'a workflow that does not ask for the cost gets the text it expects');
  return answer as string;
};

/** The enhance model's prices as a page hands them to the item: $3 and $15 per million tokens. */
const PRICE: RewritePrice = { perMillionInputTokens: 3, perMillionOutputTokens: 15 };
/** What the simulator's answer to `prompt` costs at PRICE, from the usage it reports. */
const pricedUsage = (prompt: string): number => {
  const usage = messageUsage(prompt, ENHANCE.system, replyFor(prompt));
  return Math.round(usage.input_tokens * 3 + usage.output_tokens * 15) / 1e6;
};

/** Where the store keeps the rewrite of `prompt` (storage/records/rewrites.ts): named by the prompt text and the settings. */
function recordFile(dir: string, prompt: string): string {
  return join(dir, '.reelflow', 'rewrites', `${rewriteId(prompt, ENHANCE)}.json`);
}

/** The prompt's stored rewrite record, as the activity wrote it. */
function storedRecord(dir: string, prompt: string): { at: string; calls?: unknown[] } {
  return JSON.parse(readFileSync(recordFile(dir, prompt), 'utf8')) as { at: string; calls?: unknown[] };
}

describe('enhancePrompt: one Messages call per item per prompt text', () => {
  let sim: SimHandleExt;
  const calls = () => Object.values(sim.stats().messagesAuth).reduce((a, b) => a + b, 0);
  before(async () => {
    sim = await startSimulator({ ports: [0], keys: [KEY], seed: 3 });
  });
  after(async () => {
    await closeActivityResources();
    await sim?.close();
  });

  it('an attempt retried after the first made its call (its result lost with its worker) asks nothing again', async () => {
    const dir = tempDir('reelflow-enhance-');
    const input = { settings: settings(sim, dir), prompt: 'a harbour at night', key: 'harbour' };
    const before = calls();
    const first = await attempt(input);
    assert.equal(first, replyFor('a harbour at night'));
    assert.equal(calls() - before, 1);
    // The retry: same input, whatever happened to the first attempt's completion.
    assert.equal(await attempt(input), first);
    assert.equal(calls() - before, 1, 'the retried attempt reused the stored rewrite');
    // Another worker process (nothing cached in memory) and a later run of the job.
    await closeActivityResources();
    assert.equal(await attempt(input), first);
    assert.equal(calls() - before, 1);

    // An edited prompt is a new text: asked once, then reused.
    const edited = { ...input, prompt: 'a harbour at dawn' };
    assert.equal(await attempt(edited), replyFor('a harbour at dawn'));
    assert.equal(await attempt(edited), replyFor('a harbour at dawn'));
    assert.equal(calls() - before, 2);
    // Other enhance settings ask again as well.
    const otherModel = { ...edited, settings: settings(sim, dir, { ...ENHANCE, maxTokens: 500 }) };
    await attempt(otherModel);
    await attempt(otherModel);
    assert.equal(calls() - before, 3);
  });

  it('items with the same prompt are separate items: each is asked once', async () => {
    const dir = tempDir('reelflow-enhance-');
    const before = calls();
    await Promise.all(['a', 'b', 'c'].map((key) => attempt({ settings: settings(sim, dir), prompt: 'the same idea', key })));
    await Promise.all(['a', 'b', 'c'].map((key) => attempt({ settings: settings(sim, dir), prompt: 'the same idea', key })));
    assert.equal(calls() - before, 3);
  });

  it('a workflow started before the store (no key in its input) asks on every attempt, as it did', async () => {
    const dir = tempDir('reelflow-enhance-');
    const before = calls();
    const input = { settings: settings(sim, dir), prompt: 'an old workflow' };
    assert.equal(await attempt(input), replyFor('an old workflow'));
    assert.equal(await attempt(input), replyFor('an old workflow'));
    assert.equal(calls() - before, 2);
    assert.deepEqual(readdirSync(dir), [], 'nothing stored');
  });

  it('the key never goes into the store, even when the answer echoes it', async () => {
    const dir = tempDir('reelflow-enhance-');
    const text = await attempt({ settings: settings(sim, dir), prompt: `a sign that reads ${KEY}`, key: 'echo' });
    assert.ok(!text.includes(KEY) && text.includes('[REDACTED]'), text);
    assert.deepEqual(filesContaining(dir, KEY), []);
    assert.equal(filesContaining(dir, '[REDACTED]').length, 1, 'the record was written');
  });

  it('an answer that cannot be stored is still used by the attempt that paid for it', async () => {
    const dir = tempDir('reelflow-enhance-');
    // The record's part file is a folder: the store reads (nothing there) but cannot write.
    mkdirSync(`${recordFile(join(dir, 'out'), 'unstorable')}.part`, { recursive: true });
    const before = calls();
    const input = { settings: settings(sim, join(dir, 'out')), prompt: 'unstorable', key: 'u' };
    assert.equal(await attempt(input), replyFor('unstorable'));
    assert.equal(calls() - before, 1);
  });

  describe('priced from the answer (withCost: the workflows since rewrites were priced from usage)', () => {
    const priced = (input: Parameters<typeof enhancePrompt>[0], info: { attempt?: number; scheduledTimestampMs?: number } = {}) =>
      new MockActivityEnvironment(info).run(enhancePrompt, { ...input, withCost: true, price: PRICE });

    it("a call made costs its usage at the model's prices; a stored rewrite reused costs nothing", async () => {
      const dir = tempDir('reelflow-enhance-');
      const input = { settings: settings(sim, dir), prompt: 'a tram in the fog', key: 'tram' };
      const before = calls();
      const first = await priced(input);
      assert.equal(calls() - before, 1);
      const usd = pricedUsage('a tram in the fog');
      const { at, calls: kept } = storedRecord(dir, 'a tram in the fog');
      assert.deepEqual(first, { prompt: replyFor('a tram in the fog'), paid: true, cost: { usd, source: 'usage' }, at });
      // The record keeps the paid call, priced: its spend is counted even if no manifest row ever does.
      assert.deepEqual(kept, [{ at, by: 'render', key: 'tram', cost_usd: usd, cost_source: 'usage' }]);
      const estimate = estimateEnhanceUsd({ [ENHANCE.model]: { source: '', ...PRICE } }, ENHANCE, input.prompt);
      assert.ok('usd' in estimate && usd < estimate.usd, `usage ${usd} is below the max_tokens estimate ${JSON.stringify(estimate)}`);
      // A later run (or another item's workflow) finds it stored: no call, nothing paid.
      assert.deepEqual(await priced(input), { prompt: replyFor('a tram in the fog'), paid: false });
      assert.equal(calls() - before, 1);
    });

    it("a retry after the attempt that paid lost its completion counts that attempt's call, from the stored usage", async () => {
      const dir = tempDir('reelflow-enhance-');
      const input = { settings: settings(sim, dir), prompt: 'a diver under ice', key: 'diver' };
      const scheduled = Date.now() - 1_000;
      const before = calls();
      await priced(input, { attempt: 1, scheduledTimestampMs: scheduled });
      // The worker died before reporting: attempt 2 of the same activity finds the record it wrote.
      const retried = await priced(input, { attempt: 2, scheduledTimestampMs: scheduled });
      assert.equal(calls() - before, 1, 'no second call');
      assert.deepEqual(retried, {
        prompt: replyFor('a diver under ice'),
        paid: true,
        cost: { usd: pricedUsage('a diver under ice'), source: 'usage' },
        at: storedRecord(dir, 'a diver under ice').at,
      });
      // A retry of an activity scheduled after the record was made (a later run's) paid nothing.
      assert.deepEqual(await priced(input, { attempt: 2, scheduledTimestampMs: Date.now() + 1_000 }), {
        prompt: replyFor('a diver under ice'),
        paid: false,
      });

      // A record without a usage (the gateway sent none, or one not believable): the estimate, and it says so.
      const stored = recordFile(dir, 'a diver under ice');
      const record = JSON.parse(readFileSync(stored, 'utf8')) as Record<string, unknown>;
      writeFileSync(stored, JSON.stringify({ ...record, usage: { input_tokens: -5, output_tokens: 1e12 } }));
      const estimate = estimateEnhanceUsd({ [ENHANCE.model]: { source: '', ...PRICE } }, ENHANCE, input.prompt);
      assert.ok('usd' in estimate);
      assert.deepEqual((await priced(input, { attempt: 3, scheduledTimestampMs: scheduled })) as unknown, {
        prompt: replyFor('a diver under ice'),
        paid: true,
        cost: { usd: estimate.usd, source: 'estimated' },
        at: record.at,
      });
    });

    it('an enhance model without a price: the call is paid, with no figure (the workflow keeps its estimate, none)', async () => {
      const dir = tempDir('reelflow-enhance-');
      const answer = await new MockActivityEnvironment().run(enhancePrompt, {
        settings: settings(sim, dir),
        prompt: 'unpriced',
        key: 'u',
        withCost: true,
      });
      const { at, calls: kept } = storedRecord(dir, 'unpriced');
      assert.deepEqual(answer, { prompt: replyFor('unpriced'), paid: true, at });
      // The call names the item whose row counts it (the record is the prompt text's, whoever asked).
      assert.deepEqual(kept, [{ at, by: 'render', key: 'u' }]);
    });
  });
});
