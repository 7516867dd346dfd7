// A budget counts only what the user can trust (docs/costs.md): six items at the user's own price
// of $1 a video, `--budget 2`, and one thing in the job's folder or on the wire that tries to make
// the renders look cheaper. The built CLI, a real Temporal development server and the simulator,
// which counts the creates that reach it; a hostile loopback proxy in front of it for the billed
// figure. No more than the budget's two creates may reach the gateway in any case.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli } from '../support/cli';
import { recordingProxy, type RecordingProxy } from '../support/recording-proxy';
import { tempDir, writeJob } from '../support/jobs';

const KEY = 'sk-test-budget-trust-0123456789';
const MODEL = 'seedance-1-0-pro-250528';
/** The user's own price, in LiteLLM's format: $0.20 a second, $1.00 for the items' 5 s. */
const USER_PRICES = JSON.stringify({ [MODEL]: { output_cost_per_second: 0.2 } });

describe('a budget counts only what the user can trust', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [300, 800], seed: 31 });
  /** Answers every create with what LiteLLM would say it cost, as a gateway that lies says. */
  const billing: Record<string, RecordingProxy> = {};
  let settings: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    // The user's settings folder is the test's own: the machine's ~/.config/reelflow is not read.
    settings = tempDir();
    env = { ...e2e.env, XDG_CONFIG_HOME: settings };
    for (const cost of ['0', '-5', 'abc'])
      billing[cost] = await recordingProxy(e2e.sim.urls[0]!, () => undefined, {
        answerHeaders: (req): Record<string, string> =>
          req.method === 'POST' && !/messages/.test(req.url ?? '') ? { 'x-litellm-response-cost': cost } : {},
      });
  });
  after(async () => {
    for (const proxy of Object.values(billing)) await proxy.close();
  });

  /** A folder with a job of six items, `name-1` .. `name-6`, and the user's prices file beside it. */
  function sixItems(name: string, options: { baseUrls?: string[]; extra?: string } = {}) {
    const dir = tempDir();
    const prompts = Array.from({ length: 6 }, (_, i) => `${name} prompt ${i + 1}`);
    const job = writeJob(dir, {
      name,
      baseUrls: options.baseUrls ?? e2e.sim.urls,
      items: prompts.map((prompt, i) => ({ id: `${name}-${i + 1}`, prompt })),
      maxInFlight: 10,
      ...(options.extra ? { extra: options.extra } : {}),
    });
    const mine = join(dir, 'mine.json');
    writeFileSync(mine, USER_PRICES);
    const creates = () => prompts.reduce((sum, p) => sum + (e2e.sim.stats().createsByPrompt[p] ?? 0), 0);
    return { dir, job, mine, creates };
  }

  it("a handed folder's manifest rows with a negative cost_usd are skipped with a warning; a real earlier spend still counts", async () => {
    const { dir, job, mine, creates } = sixItems('planted-spend');
    const out = join(dir, 'out');
    mkdirSync(join(out, '.reelflow'), { recursive: true });
    writeFileSync(
      join(out, '.reelflow', 'owner.json'),
      `${JSON.stringify({ job: 'planted-spend', workflowId: 'reelflow-planted-spend' })}\n`,
    );
    const row = (key: string, cost: string) =>
      `{"key":"${key}","id":"${key}","index":99,"state":"failed","model":"${MODEL}","protocol":"general","prompt":"earlier",` +
      `"task_id":null,"base_url":null,"created_at":null,"finished_at":"2026-11-01T00:00:00.000Z","polls":0,"file":null,` +
      `"bytes":null,"sha256":null,"error":{"kind":"render_failed","message":"earlier"},"cost_usd":${cost},"cost_source":"estimated"}`;
    // Line 1 is an earlier run's real spend ($1): it still counts, so one item fits in $2, not two.
    // A cost given as a string ("-1000") or as -1e999 (-Infinity once parsed) is covered by
    // test/unit/storage/spend-rows.test.ts: here either turns today's sum into NaN or null, which
    // happens to hold the job to the budget alone and would hide the -1000.
    const lines = [row('earlier-1', '1'), row('planted-1', '-1000'), row('planted-2', '-1000')];
    writeFileSync(join(out, 'manifest.jsonl'), `${lines.join('\n')}\n`);

    const run = await runCli(['run', job, '--prices', mine, '--budget', '2'], { env });
    const said = `${run.stdout}\n${run.stderr}`;
    assert.equal(creates(), 1, `creates at the gateway\n${said}`);
    assert.equal(run.code, 1, said);
    assert.match(run.stdout, /stopped: budget reached: \$2\.00 of \$2\.00 spent or reserved; 5 items not started/);
    for (const line of [2, 3])
      assert.match(said, new RegExp(`manifest\\.jsonl:${line}: .*cost_usd.*the row is skipped`), `line ${line} named`);
    assert.doesNotMatch(said, /manifest\.jsonl:1:/, 'the real row is not named');
    // The earlier row was paid before this run: the summary says this run's spend and the job's apart.
    assert.match(run.stdout, /^this run: \$1\.00 /m, "this run's create alone");
    assert.match(run.stdout, /^the job: {2}\$2\.00 /m, 'the spend shown counts the trusted rows only');
  });

  it('a gateway that bills each create at $0 does not make the renders free for the budget', async () => {
    const { job, mine, creates } = sixItems('billed-zero', { baseUrls: [billing['0']!.url] });
    const run = await runCli(['run', job, '--prices', mine, '--budget', '2'], { env });
    const said = `${run.stdout}\n${run.stderr}`;
    assert.equal(creates(), 2, `creates at the gateway\n${said}`);
    assert.equal(run.code, 1, said);
    assert.match(run.stdout, /stopped: budget reached: \$2\.00 of \$2\.00 spent or reserved; 4 items not started/);
  });

  for (const cost of ['-5', 'abc'])
    it(`a billed figure that is not an amount (${cost}) is not believed: the budget holds (regression)`, async () => {
      const { job, mine, creates } = sixItems(`billed-${cost === '-5' ? 'negative' : 'text'}`, { baseUrls: [billing[cost]!.url] });
      const run = await runCli(['run', job, '--prices', mine, '--budget', '2'], { env });
      assert.equal(creates(), 2, `${run.stdout}\n${run.stderr}`);
      assert.equal(run.code, 1);
    });

  it("the user's --prices outrank a job file's price of 0: the job file's line is named, the budget holds to the user's price", async () => {
    const { job, mine, creates } = sixItems('job-priced-zero', { extra: `pricing:\n  ${MODEL}:\n    per_video: 0` });
    const run = await runCli(['run', job, '--prices', mine, '--budget', '2'], { env });
    const said = `${run.stdout}\n${run.stderr}`;
    assert.equal(creates(), 2, `creates at the gateway\n${said}`);
    assert.equal(run.code, 1, said);
    assert.match(said, /job-priced-zero\.yaml:\d+:\d+: warning: pricing\.seedance-1-0-pro-250528 .*below your price .*mine\.json/);
    assert.match(said, /\$6\.00 {2}seedance-1-0-pro-250528: 6 items, price from .*mine\.json/);

    const checked = await runCli(['validate', job, '--prices', mine], { env });
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(
      `${checked.stdout}\n${checked.stderr}`,
      /job-priced-zero\.yaml:\d+:\d+: warning: pricing\.seedance-1-0-pro-250528 .*below your price/,
    );
  });

  it("the prices file in the user's settings outranks a job file's lower price", async () => {
    mkdirSync(join(settings, 'reelflow'), { recursive: true });
    writeFileSync(join(settings, 'reelflow', 'prices.json'), USER_PRICES);
    const { job, creates } = sixItems('job-priced-low', { extra: `pricing:\n  ${MODEL}:\n    per_video: 0.5` });
    const run = await runCli(['run', job, '--budget', '2'], { env });
    const said = `${run.stdout}\n${run.stderr}`;
    assert.equal(creates(), 2, `creates at the gateway\n${said}`);
    assert.equal(run.code, 1, said);
    assert.match(said, /job-priced-low\.yaml:\d+:\d+: warning: pricing\.seedance-1-0-pro-250528 .*below your price .*prices\.json/);
  });

  it('a job file that prices a model at 0 under --budget, with no price of the user for it, is refused before anything starts (exit 2, file:line)', async () => {
    const { job, creates } = sixItems('job-free-under-budget', {
      extra: `pricing:\n  ${MODEL}:\n    per_video: 0`,
      baseUrls: e2e.sim.urls,
    });
    // No user prices for this model: the settings folder of this run has none.
    const run = await runCli(['run', job, '--budget', '2'], { env: { ...env, XDG_CONFIG_HOME: tempDir() } });
    assert.equal(run.code, 2, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stderr, /job-free-under-budget\.yaml:\d+:\d+: pricing\.seedance-1-0-pro-250528 .*\$0.*--budget/);
    assert.equal(creates(), 0);
  });

  for (const bad of ['0', 'NaN', 'Infinity', '-1'])
    it(`--budget ${bad} is refused (exit 2) before anything is sent (regression)`, async () => {
      const { job, creates } = sixItems(`budget-bad-${bad.toLowerCase().replace('-', 'minus')}`);
      const run = await runCli(['run', job, '--budget', bad], { env });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /--budget .*a number above 0/);
      assert.equal(creates(), 0);
    });
});
