// The counts a job shows while it runs and when it stops (docs/takes.md): the built CLI runs jobs with
// several takes per prompt, `--only` and budgets against a real Temporal server and the simulator,
// while this test asks the job's own `progress` query as `run` and `status` do, every 100 ms. Every
// answer must add up: done, already done, in flight and pending are never negative and make the total.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli, startCli } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';
import { progressQuery } from '../../workflows/job';
import { jobWorkflowId } from '../../workflows/ids';
import type { JobProgress, JobResult } from '../../workflows/types';

const KEY = 'sk-test-counts-0123456789abcd';
const MODEL = 'seedance-1-0-pro-250528';

/** A job file of `prompts` prompts with `takes` takes each (defaults.variants). */
function takesJob(dir: string, name: string, urls: string[], prompts: number, takes: number, extra = '', maxInFlight = 2): string {
  const items = Array.from({ length: prompts }, (_, i) => ({ id: `p${i + 1}`, prompt: `${name} prompt ${i + 1}` }));
  const job = writeJob(dir, { name, baseUrls: urls, items, maxInFlight, extra });
  writeFileSync(job, readFileSync(job, 'utf8').replace('defaults:\n', `defaults:\n  variants: ${takes}\n`));
  return job;
}

/** Every figure of one answer, and that they make the total: what the live display and status print. */
function assertAddsUp(p: JobProgress, where: string): void {
  const c = p.counts;
  const figures = { ...c, started: p.started, notStarted: p.notStarted ?? 0 };
  for (const [name, n] of Object.entries(figures)) assert.ok(n >= 0, `${where}: ${name} is ${n}: ${JSON.stringify(p)}`);
  const done = c.succeeded + c.failed + c.timed_out + c.canceled + c.unknown;
  assert.ok(p.started <= p.total, `${where}: started ${p.started} of ${p.total}: ${JSON.stringify(p)}`);
  assert.equal(done + c.skipped + c.in_flight + c.pending, p.total, `${where}: the counts make the total: ${JSON.stringify(p)}`);
}

// The cases share one Temporal server and simulator and run side by side: each has its own job,
// output and prompts, and most of their time is waiting on renders and polls.
describe('counts that add up: takes past the window, --only, budget stops', { concurrency: true }, () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [150, 400], seed: 33 });

  /** Runs `args` to its end while asking the job's progress; returns the run and every answer. */
  async function runWatched(name: string, args: string[]) {
    const connection = await Connection.connect({ address: e2e.temporal.address });
    const client = new Client({ connection, namespace: 'default' });
    const answers: JobProgress[] = [];
    const run = startCli(args, { env: e2e.env });
    let ended = false;
    const watching = (async () => {
      while (!ended) {
        const p = await client.workflow
          .getHandle(jobWorkflowId(name))
          .query(progressQuery)
          .catch(() => undefined);
        if (p) answers.push(p);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const result = await run.done;
    ended = true;
    await watching;
    // The job's own result: what `run` prints its stop and its summary from.
    const ran = (await client.workflow.getHandle(jobWorkflowId(name)).result()) as JobResult;
    await connection.close();
    const c = ran.counts;
    const figures = { ...c, notStarted: ran.notStarted };
    for (const [figure, n] of Object.entries(figures)) assert.ok(n >= 0, `result: ${figure} is ${n}: ${JSON.stringify(ran)}`);
    const done = c.succeeded + c.failed + c.timed_out + c.canceled + c.unknown;
    assert.equal(done + c.skipped + ran.notStarted, ran.total, `result: the counts make the total: ${JSON.stringify(ran)}`);
    return { result, answers, ran };
  }

  it('12 prompts x 3 takes through a window of 2, then a re-run: no count below zero, none past the total', async () => {
    const dir = tempDir();
    const job = takesJob(dir, 'counts-takes', e2e.sim.urls, 12, 3);
    const first = await runWatched('counts-takes', ['run', job]);
    assert.equal(first.result.code, 0, `${first.result.stdout}\n${first.result.stderr}`);
    assert.ok(first.answers.length >= 5, `progress answered ${first.answers.length} times`);
    first.answers.forEach((p, i) => assertAddsUp(p, `first run, answer ${i}`));
    const last = first.answers.at(-1)!;
    assert.equal(last.total, 36);

    // Take 2 of prompts 3 and 9 deleted: the re-run renders them, 34 already done.
    for (const name of ['003-p3-t2.mp4', '009-p9-t2.mp4']) rmSync(join(dir, 'out', name));
    const again = await runWatched('counts-takes', ['run', job]);
    assert.equal(again.result.code, 0, again.result.stderr);
    again.answers.forEach((p, i) => assertAddsUp(p, `re-run, answer ${i}`));
    assert.deepEqual([again.ran.counts.skipped, again.ran.counts.succeeded], [34, 2]);
  });

  it('--only one prompt of a job with takes: the run counts its own takes, 0..1 of 1', async () => {
    const dir = tempDir();
    const job = takesJob(dir, 'counts-only', e2e.sim.urls, 6, 2, `pricing:\n  ${MODEL}:\n    per_video: 0.25`);
    const first = await runCli(['run', job], { env: e2e.env });
    assert.equal(first.code, 0, first.stderr);
    const only = await runWatched('counts-only', ['run', job, '--only', 'p5']);
    assert.equal(only.result.code, 0, `${only.result.stdout}\n${only.result.stderr}`);
    for (const [i, p] of only.answers.entries()) assertAddsUp(p, `--only, answer ${i}`);
    assert.deepEqual([only.ran.total, only.ran.counts.succeeded, only.ran.counts.skipped], [1, 1, 0]);
    // status counts every take the job has: the job file's 12 and the one --only made.
    const status = await runCli(['status', job], { env: e2e.env });
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^counts-only: 13 of 13 succeeded/m);

    // One prompt edited: the dry run shows and prices its 2 takes, not the whole job's 12.
    writeFileSync(job, readFileSync(job, 'utf8').replace('counts-only prompt 2"', 'counts-only prompt 2, edited"'));
    const dry = await runCli(['run', job, '--dry-run'], { env: e2e.env });
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(
      dry.stdout,
      /^counts-only: dry run, 2 create request\(s\) \(10 of the job's 12 item\(s\) already ended: not sent again\); nothing is sent$/m,
    );
    assert.match(dry.stdout, /^2 create request\(s\), by model and protocol:$/m);
    assert.match(dry.stdout, /\$0\.50/, 'priced: 2 takes at $0.25');
    assert.doesNotMatch(dry.stdout, /\$3\.00/, 'not the whole job at $0.25');
    // The run itself quotes the same before it starts: what it will send, not the whole job.
    const edited = await runCli(['run', job], { env: e2e.env });
    assert.equal(edited.code, 0, edited.stderr);
    assert.match(edited.stderr, /^estimate: \$0\.50 \(USD\) for 2 of 2 items$/m);
    assert.doesNotMatch(edited.stderr, /\$3\.00/, 'not the whole job at $0.25');
  });

  it('a budget stop says one number of items not started, the same in its message, its hint and the summary', async () => {
    const dir = tempDir();
    // 4 prompts x 3 takes at $1 with $5: five takes start, seven do not.
    const job = takesJob(dir, 'counts-budget', e2e.sim.urls, 4, 3, `pricing:\n  ${MODEL}:\n    per_video: 1\nbudget:\n  max_usd: 5`, 12);
    const stopped = await runWatched('counts-budget', ['run', job]);
    assert.equal(stopped.result.code, 1, `${stopped.result.stdout}\n${stopped.result.stderr}`);
    stopped.answers.forEach((p, i) => assertAddsUp(p, `budget stop, answer ${i}`));
    const out = stopped.result.stdout;
    assert.match(out, /budget reached: \$5\.00 of \$5\.00 spent or reserved; 7 items not started/);
    assert.match(out, /^ {2}7 item\(s\) were not started; after the fix/m);
    assert.match(out, /^ {2}7 item\(s\) not rendered yet/m);
  });

  it('--only with a budget the earlier spend has used: "1 items not started", never a negative number', async () => {
    const dir = tempDir();
    const job = takesJob(dir, 'counts-only-budget', e2e.sim.urls, 3, 1, `pricing:\n  ${MODEL}:\n    per_video: 1`);
    const first = await runCli(['run', job], { env: e2e.env });
    assert.equal(first.code, 0, first.stderr);
    const stopped = await runWatched('counts-only-budget', ['run', job, '--only', 'p3', '--budget', '3.5']);
    assert.equal(stopped.result.code, 1, `${stopped.result.stdout}\n${stopped.result.stderr}`);
    stopped.answers.forEach((p, i) => assertAddsUp(p, `--only --budget, answer ${i}`));
    assert.match(stopped.result.stdout, /budget reached: \$3\.00 of \$3\.50 spent or reserved; 1 items not started/);
    // The command that renders it is the --only run again: a plain run leaves --only takes alone (docs/takes.md).
    assert.match(stopped.result.stdout, /^ {2}1 item\(s\) were not started; after the fix, `reelflow run \S+ --only p3` renders them/m);
    assert.match(stopped.result.stdout, /^ {2}1 item\(s\) not rendered yet: run `reelflow run \S+ --only p3` to continue$/m);
  });

  it('one take priced above the whole budget is named, with its price, not "budget reached: $0.00"', async () => {
    const dir = tempDir();
    const job = takesJob(dir, 'counts-typo', e2e.sim.urls, 2, 1, `pricing:\n  ${MODEL}:\n    per_video: 25\nbudget:\n  max_usd: 20`);
    const stopped = await runCli(['run', job], { env: e2e.env });
    assert.equal(stopped.code, 1, `${stopped.stdout}\n${stopped.stderr}`);
    assert.match(stopped.stdout, /p1 alone is estimated at \$25\.00, more than the whole budget of \$20\.00/);
    assert.match(stopped.stdout, new RegExp(`fix: check the price of ${MODEL}`));
    assert.equal(e2e.sim.stats().createsByPrompt['counts-typo prompt 1'] ?? 0, 0, 'nothing sent');
  });
});
