// The enhance activity (activities/render.ts enhancePrompt) with a real gateway client, the real
// simulator over HTTP (its stats count Messages calls) and a real output directory; Temporal's
// MockActivityEnvironment gives it an activity context. A retried attempt, a later run, another
// worker: one Messages call per item per prompt text.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { closeActivityResources } from '../../../activities/context';
import { enhancePrompt } from '../../../activities/render';
import type { EnhanceSettings, JobSettings } from '../../../jobfile/plan';
import { startSimulator, type SimHandleExt } from '../../../sim';
import { replyFor } from '../../../sim/messages';
import { filesContaining } from '../../support/gateways';
import { tempDir } from '../../support/jobs';

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

/** One attempt of the activity, as a worker runs it. */
const attempt = (input: Parameters<typeof enhancePrompt>[0]): Promise<string> => new MockActivityEnvironment().run(enhancePrompt, input);

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
    const recordName = `${createHash('sha256').update('u', 'utf8').digest('hex')}.json.part`;
    mkdirSync(join(dir, 'out', '.reelflow', 'rewrites', recordName), { recursive: true });
    const before = calls();
    const input = { settings: settings(sim, join(dir, 'out')), prompt: 'unstorable', key: 'u' };
    assert.equal(await attempt(input), replyFor('unstorable'));
    assert.equal(calls() - before, 1);
  });
});
