// One prompt rewrite per prompt text (docs/enhance.md), shared by every take and every run: the
// built CLI, the real simulator (its stats count every Messages call and every created prompt) and
// a real Temporal server. The takes of a prompt start together, so a rewrite asked for by each of
// them at once must still be one paid call, and the takes then differ only by their seed.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';
import type { SimHandleExt } from '../../sim';
import { PRICED_ENHANCE } from '../support/priced-enhance';

const KEY = 'sk-test-e2e-enhance-takes-0123456789';

const messagesCalls = (sim: SimHandleExt): number => Object.values(sim.stats().messagesAuth).reduce((a, b) => a + b, 0);

const PRODUCTS = ['shoe', 'cap', 'bag', 'watch', 'mug', 'lamp', 'kite', 'scarf', 'bike', 'pen', 'chair', 'radio'];

describe('prompt rewrites with takes: one Messages call per prompt text', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0, 0], renderMs: [200, 400], seed: 5 });

  it('12 prompts x 3 takes started together make 12 Messages calls, and the takes of a prompt send one rewrite', async () => {
    const dir = tempDir();
    const items = PRODUCTS.map((p) => ({ id: p, prompt: `A bright social ad for the ${p}` }));
    const job = writeJob(dir, { name: 'enh-takes', baseUrls: e2e.sim.urls, items, extra: PRICED_ENHANCE, maxInFlight: 36 });
    writeFileSync(job, readFileSync(job, 'utf8').replace('defaults:\n', 'defaults:\n  variants: 3\n'));
    const calls0 = messagesCalls(e2e.sim);
    const creates0 = e2e.sim.stats().createsByPrompt;

    const run = await runCli(['run', job, '--json'], { env: e2e.env });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(messagesCalls(e2e.sim) - calls0, 12, 'one Messages call per prompt text, not one per take');

    const rows = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; enhanced_prompt: string; rewrite_cost_usd?: number; rewrite_at?: string });
    assert.equal(rows.length, 36);
    for (const product of PRODUCTS) {
      const takes = rows.filter((r) => r.id === product);
      assert.equal(takes.length, 3);
      assert.equal(new Set(takes.map((t) => t.enhanced_prompt)).size, 1, `the takes of ${product} sent one rewrite`);
      const sent = e2e.sim.stats().createsByPrompt[takes[0]!.enhanced_prompt]! - (creates0[takes[0]!.enhanced_prompt] ?? 0);
      assert.equal(sent, 3, `three creates of the one rewrite of ${product}`);
      const paid = takes.filter((t) => t.rewrite_at !== undefined);
      assert.equal(paid.length, 1, `one take of ${product} paid for the rewrite`);
      assert.ok(paid[0]!.rewrite_cost_usd! > 0);
      assert.equal(takes.filter((t) => t.rewrite_cost_usd !== undefined).length, 1, 'the others paid nothing for it');
    }
    assert.equal(readdirSync(join(dir, 'out', '.reelflow', 'rewrites')).length, 12, 'one record per prompt text');

    // A later run (videos deleted, rendered again) reuses them: no call.
    const deleted = readdirSync(join(dir, 'out'))
      .filter((f) => f.endsWith('.mp4'))
      .slice(0, 6);
    for (const file of deleted) rmSync(join(dir, 'out', file));
    const again = await runCli(['run', job], { env: e2e.env });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.equal(
      readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
        .trim()
        .split('\n').length,
      42,
    );
    assert.equal(messagesCalls(e2e.sim) - calls0, 12, 'every run shares the rewrites');
  });
});
