// `reelflow enhance` and the rewrite store as a user meets them: the built CLI, the real simulator
// (its stats count every Messages call and record every created prompt) and a real Temporal server.
// One Messages call per item per prompt text, across commands and runs; the renders use exactly
// the rewrites the user was shown.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli } from '../support/cli';
import { closedBaseUrl, filesContaining } from '../support/gateways';
import { tempDir, writeJob } from '../support/jobs';
import type { SimHandleExt } from '../../sim';
import { ENHANCE, PRICED_ENHANCE, rewriteUsd } from '../support/priced-enhance';

const KEY = 'sk-test-e2e-enhance-0123456789';

const roundUsd = (usd: number): number => Math.round(usd * 1e6) / 1e6;

interface ShownSpend {
  usage_usd: number;
  spent_usd: number;
  per_model: Array<{ model: string; spent_usd: number; usage_usd: number }>;
}

/** `status --json`'s spend of an ended job. */
async function statusSpend(job: string, env: NodeJS.ProcessEnv): Promise<ShownSpend> {
  const status = await runCli(['status', job, '--json'], { env });
  assert.equal(status.code, 0, status.stderr);
  return (JSON.parse(status.stdout) as { spend: ShownSpend }).spend;
}

const messagesCalls = (sim: SimHandleExt): number => Object.values(sim.stats().messagesAuth).reduce((a, b) => a + b, 0);
const createdPrompts = (sim: SimHandleExt): Record<string, number> => sim.stats().createsByPrompt;

interface ShownRewrite {
  key: string;
  id: string | null;
  prompt: string;
  enhanced_prompt: string | null;
  reused: boolean;
  error: string | null;
}

function parseShown(stdout: string): ShownRewrite[] {
  return (JSON.parse(stdout) as { items: ShownRewrite[] }).items;
}

function manifestRows(dir: string): Array<Record<string, unknown>> {
  return readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('reelflow enhance: see the rewrites first, pay for each once', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0, 0], renderMs: [300, 600], seed: 11 });

  it('enhance, then run: Messages calls == items, and every created prompt is the rewrite shown', async () => {
    const dir = tempDir();
    const items = [
      { id: 'dawn', prompt: 'a lighthouse at dawn' },
      { id: 'rain', prompt: 'rain on a tin roof' },
      { id: 'fox', prompt: 'a fox crossing a snowy field' },
    ];
    const job = writeJob(dir, { name: 'enh-show', baseUrls: e2e.sim.urls, items, extra: ENHANCE });
    const calls0 = messagesCalls(e2e.sim);

    const shown = await runCli(['enhance', job, '--json'], { env: e2e.env });
    assert.equal(shown.code, 0, shown.stderr);
    const rewrites = parseShown(shown.stdout);
    assert.equal(rewrites.length, 3);
    assert.equal(messagesCalls(e2e.sim) - calls0, 3, 'one Messages call per item');
    for (const [i, item] of items.entries()) {
      const r = rewrites[i]!;
      assert.equal(r.id, item.id);
      assert.equal(r.prompt, item.prompt);
      assert.equal(r.reused, false);
      assert.ok(
        r.enhanced_prompt && r.enhanced_prompt.startsWith(item.prompt) && r.enhanced_prompt !== item.prompt,
        r.enhanced_prompt ?? '',
      );
    }
    // Nothing rendered yet: no create, no video.
    assert.equal(
      items.some((i) => createdPrompts(e2e.sim)[i.prompt] !== undefined),
      false,
    );
    assert.ok(!readdirSync(join(dir, 'out')).some((f) => f.endsWith('.mp4')));
    assert.deepEqual(filesContaining(dir, KEY), [], 'the stored rewrites hold no key');
    assert.equal(readdirSync(join(dir, 'out', '.reelflow', 'rewrites')).length, 3);

    // The human view: original and rewrite side by side, sized to the terminal.
    const table = await runCli(['enhance', job], { env: { ...e2e.env, COLUMNS: '160' } });
    assert.equal(table.code, 0, table.stderr);
    assert.equal(messagesCalls(e2e.sim) - calls0, 3, 'shown again from the store: no Messages call');
    assert.match(table.stdout, /PROMPT\s+│\s+REWRITE/);
    assert.match(table.stdout, /a lighthouse at dawn\s+│ a lighthouse at dawn\. Cinematic/);
    for (const line of table.stdout.split('\n')) assert.ok([...line].length <= 160, `wider than the terminal: ${line}`);
    assert.match(table.stderr, /3 item\(s\): 3 reused from .*rewrites, 0 asked of Messages/);

    const run = await runCli(['run', job], { env: e2e.env });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(messagesCalls(e2e.sim) - calls0, 3, 'the run reuses the stored rewrites');
    const created = createdPrompts(e2e.sim);
    for (const r of rewrites) {
      assert.equal(created[r.enhanced_prompt!], 1, `the create carried the shown rewrite of ${r.id}`);
      assert.equal(created[r.prompt], undefined, 'the original prompt is never sent as a create');
    }
    for (const row of manifestRows(dir)) {
      assert.equal(row.enhanced_prompt, rewrites.find((r) => r.key === row.key)!.enhanced_prompt);
    }

    // results: the rewrite beside the prompt.
    const csv = await runCli(['results', job, '--format', 'csv'], { env: e2e.env });
    assert.equal(csv.code, 0, csv.stderr);
    assert.match(
      csv.stdout.split('\n')[0]!,
      /,prompt,enhanced_prompt,cost_usd,cost_source,rewrite_cost_usd,rewrite_cost_source,total_cost_usd$/,
    );
    // The rewrite holds commas: one quoted cell (the cost columns follow, empty without prices).
    assert.ok(csv.stdout.includes(`,a lighthouse at dawn,"${rewrites[0]!.enhanced_prompt}",,,,,\n`), csv.stdout);
    const tableResults = await runCli(['results', job], { env: { ...e2e.env, COLUMNS: '200' } });
    assert.match(tableResults.stdout, /prompt: +a fox crossing a snowy field\n +rewrite: +a fox crossing a snowy field\. Cinematic/);

    // A deleted video renders again with the same stored rewrite: no Messages call.
    rmSync(join(dir, 'out', '002-rain.mp4'));
    const again = await runCli(['run', job], { env: e2e.env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(messagesCalls(e2e.sim) - calls0, 3, 'running again makes no Messages call');
    assert.ok(readdirSync(join(dir, 'out')).includes('002-rain.mp4'));
    const lastRain = manifestRows(dir)
      .filter((r) => r.id === 'rain')
      .at(-1)!;
    assert.equal(lastRain.enhanced_prompt, rewrites[1]!.enhanced_prompt);

    // --re-enhance asks again, one call per item; the new rows win.
    const fresh = await runCli(['enhance', job, '--re-enhance', '--json'], { env: e2e.env });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(messagesCalls(e2e.sim) - calls0, 6);
    assert.ok(parseShown(fresh.stdout).every((r) => !r.reused));
    const reused = await runCli(['enhance', job, '--json'], { env: e2e.env });
    assert.ok(parseShown(reused.stdout).every((r) => r.reused));
    assert.equal(messagesCalls(e2e.sim) - calls0, 6);
  });

  it('run --enhance-only rewrites and starts nothing; run --re-enhance asks again, then renders those texts', async () => {
    const dir = tempDir();
    const items = [
      { id: 'one', prompt: 'steam over a teacup' },
      { id: 'two', prompt: 'a kite above dunes' },
    ];
    const job = writeJob(dir, { name: 'enh-run', baseUrls: e2e.sim.urls, items, extra: ENHANCE });
    const calls0 = messagesCalls(e2e.sim);

    const only = await runCli(['run', job, '--enhance-only', '--json'], { env: e2e.env });
    assert.equal(only.code, 0, only.stderr);
    assert.equal(parseShown(only.stdout).length, 2);
    assert.equal(messagesCalls(e2e.sim) - calls0, 2);
    assert.ok(!readdirSync(join(dir, 'out')).includes('manifest.jsonl'), 'nothing rendered');

    const rerun = await runCli(['run', job, '--re-enhance'], { env: e2e.env });
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.equal(messagesCalls(e2e.sim) - calls0, 4, 'asked once more per item, before rendering, and not again by the render');
    const rows = manifestRows(dir);
    assert.equal(rows.length, 2);
    for (const row of rows) assert.equal(createdPrompts(e2e.sim)[row.enhanced_prompt as string], 1);
  });

  it("every paid rewrite is in the spend: a job-wide stop's, reelflow enhance's, a replaced record's", async () => {
    const dir = tempDir();
    const items = [
      { id: 'owl', prompt: 'an owl at dusk' },
      { id: 'kite', prompt: 'a red kite over dunes' },
    ];
    const job = writeJob(dir, { name: 'enh-spend', baseUrls: e2e.sim.urls, items, extra: PRICED_ENHANCE });
    const paid = roundUsd(rewriteUsd(items[0]!.prompt) + rewriteUsd(items[1]!.prompt));
    const calls0 = messagesCalls(e2e.sim);

    // Every create refused (401): both rewrites were answered, and paid, before the job stopped.
    e2e.sim.setFaults({ errorRate: 1, errorStatuses: [401], errorBody: 'json', scope: ['create'] });
    let stopped: Awaited<ReturnType<typeof runCli>>;
    try {
      stopped = await runCli(['run', job], { env: e2e.env });
    } finally {
      e2e.sim.setFaults({ errorRate: 0 });
    }
    assert.equal(stopped.code, 2, stopped.stderr);
    assert.equal(messagesCalls(e2e.sim) - calls0, 2);
    assert.ok(!readdirSync(join(dir, 'out')).includes('manifest.jsonl'), 'not started: no manifest row');
    const usd = paid.toPrecision(2).replace(/0+$/, '');
    assert.match(stopped.stdout + stopped.stderr, new RegExp(`claude-sonnet-4-6: \\$${usd} \\(\\$0\\.00 billed, \\$${usd} from usage`));
    assert.equal((await statusSpend(job, e2e.env)).usage_usd, paid);

    // They count against a budget as earlier runs' spend: $1.00 pays for one $0.50 render beside them, not two.
    const budgeted = await runCli(['run', job, '--budget', '1'], { env: e2e.env });
    assert.equal(budgeted.code, 1, budgeted.stderr);
    assert.match(budgeted.stdout + budgeted.stderr, /budget reached: \$0\.50 of \$1\.00 spent or reserved; 1 items not started/);
    // After the fix the run reuses the paid rewrites: no call, and they count once.
    const fixed = await runCli(['run', job], { env: e2e.env });
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.equal(messagesCalls(e2e.sim) - calls0, 2);
    const afterRun = await statusSpend(job, e2e.env);
    assert.equal(afterRun.usage_usd, paid);
    assert.equal(afterRun.spent_usd, roundUsd(1 + paid));

    // reelflow enhance --re-enhance pays again: it says what, and status counts it too.
    const again = await runCli(['enhance', job, '--re-enhance', '--json'], { env: e2e.env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(messagesCalls(e2e.sim) - calls0, 4);
    const shown = JSON.parse(again.stdout) as { spend: ShownSpend; items: Array<{ cost_usd: number | null; cost_source: string | null }> };
    assert.equal(shown.spend.usage_usd, paid);
    assert.deepEqual(
      shown.items.map((i) => [i.cost_usd, i.cost_source]),
      items.map((i) => [rewriteUsd(i.prompt), 'usage']),
    );
    assert.match(again.stderr, new RegExp(`spent: +\\$${usd} \\(\\$0\\.00 billed, \\$${usd} from usage, \\$0\\.00 estimated\\) of \\$`));
    assert.equal((await statusSpend(job, e2e.env)).usage_usd, roundUsd(2 * paid));

    // A changed prompt: its render pays for a new rewrite (its row counts it) and the calls of the
    // record it replaces stay counted.
    const changed = [{ id: 'owl', prompt: 'an owl at dawn' }, items[1]!];
    writeJob(dir, { name: 'enh-spend', baseUrls: e2e.sim.urls, items: changed, extra: PRICED_ENHANCE });
    const rerun = await runCli(['run', job], { env: e2e.env });
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.equal(messagesCalls(e2e.sim) - calls0, 5);
    const owl = manifestRows(dir).at(-1)!;
    assert.deepEqual(
      [owl.id, owl.cost_usd, owl.rewrite_cost_usd, owl.rewrite_cost_source],
      ['owl', 0.5, rewriteUsd('an owl at dawn'), 'usage'],
    );
    assert.equal((await statusSpend(job, e2e.env)).usage_usd, roundUsd(2 * paid + rewriteUsd('an owl at dawn')));

    // results: each item's whole cost, the rewrite's part beside it.
    const csv = await runCli(['results', job, '--format', 'csv'], { env: e2e.env });
    assert.equal(csv.code, 0, csv.stderr);
    const owlLine = csv.stdout.split('\n').find((l) => l.includes(',an owl at dawn,'))!;
    assert.ok(
      owlLine.endsWith(`,0.5,estimated,${rewriteUsd('an owl at dawn')},usage,${roundUsd(0.5 + rewriteUsd('an owl at dawn'))}`),
      owlLine,
    );
    const table = await runCli(['results', job], { env: { ...e2e.env, COLUMNS: '200' } });
    assert.match(table.stdout, /COST +REWRITE/);
    assert.match(table.stdout, /\n#1 .*\$0\.50 est\. +\$0\.00\d+ usage/);
  });

  it('enhance refuses a job without enhance:, and a missing key, with exit 2 and nothing asked', async () => {
    const dir = tempDir();
    const plain = writeJob(dir, { name: 'enh-none', baseUrls: e2e.sim.urls, items: [{ prompt: 'plain' }] });
    const calls0 = messagesCalls(e2e.sim);
    const none = await runCli(['enhance', plain], { env: e2e.env });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /has no enhance: block/);
    const job = writeJob(dir, { name: 'enh-nokey', baseUrls: e2e.sim.urls, items: [{ prompt: 'no key' }], extra: ENHANCE });
    const noKey = await runCli(['enhance', job], { env: { ...e2e.env, GATEWAY_API_KEY: '' } });
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /GATEWAY_API_KEY is not set/);
    assert.equal(messagesCalls(e2e.sim), calls0);
  });

  it('a cause every item would meet stops enhance: a model the key may not use exits 2, no gateway answering exits 3', async () => {
    const dir = tempDir();
    const items = Array.from({ length: 6 }, (_, i) => ({ id: `i${i}`, prompt: `idea ${i}` }));
    const wrongModel = writeJob(dir, {
      name: 'enh-model',
      baseUrls: e2e.sim.urls,
      items,
      maxInFlight: 2,
      extra: 'enhance:\n  model: claude-nope-9\n  max_tokens: 300',
    });
    const model = await runCli(['enhance', wrongModel, '--json'], { env: e2e.env });
    assert.equal(model.code, 2, model.stderr);
    assert.match(model.stderr, /stopped: model "claude-nope-9" is not available to this key/);
    const shown = parseShown(model.stdout);
    assert.equal(shown.filter((r) => r.error !== null).length, 2, 'the two in flight failed');
    assert.equal(shown.filter((r) => r.error === null && r.enhanced_prompt === null).length, 4, 'the rest were not asked');

    // run --re-enhance meets the same cause before starting anything.
    const creates = Object.values(createdPrompts(e2e.sim)).reduce((a, b) => a + b, 0);
    const rerun = await runCli(['run', wrongModel, '--re-enhance'], { env: e2e.env });
    assert.equal(rerun.code, 2, rerun.stderr);
    assert.match(rerun.stderr, /claude-nope-9/);
    assert.doesNotMatch(rerun.stderr, /started/);
    assert.equal(
      Object.values(createdPrompts(e2e.sim)).reduce((a, b) => a + b, 0),
      creates,
      'nothing created',
    );

    const down = writeJob(dir, { name: 'enh-down', baseUrls: [await closedBaseUrl()], items: items.slice(0, 2), extra: ENHANCE });
    const unreachable = await runCli(['enhance', down], { env: e2e.env });
    assert.equal(unreachable.code, 3, unreachable.stderr);
    assert.match(unreachable.stderr, /stopped: .*connection refused/);
    assert.doesNotMatch(unreachable.stderr, /warning: message failed/, 'failover notes only with --verbose');
  });
});
