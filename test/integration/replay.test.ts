// Determinism: recorded histories (scripts/record-histories.ts) replay through the current workflow
// code. session5-* were recorded before the patches of session 6, session6-* before those of
// session 7 (job-wide stops, held tasks, the deadline check, budgets), session7-* before those of
// session 8 (rewrites reserved, shared-limit permits); they stay so that jobs started by that code
// stay covered. job-takes, render-take, render-shared and limiter cover session 8's takes, budget
// with rewrites, and the shared limiter. job-takes-window-* were recorded before session 12 counted
// items by their place in the plan: takes of one prompt past the window, continued as new mid-page
// (scripts/record-histories.ts, RECORD_ONLY); render-rewrite-* and rewrite the takes of one prompt
// sharing its rewrite (the take that starts the RewriteWorkflow, takes that find it running and
// wait, the child itself). job-events and notify-job-ended (session 13, patch job-events-out) are a
// job with notify targets and its job.ended NotifyWorkflow; jobs without targets never ask the patch,
// so the histories above are what the code before it recorded. session13-render-polls-before-callbacks was recorded before a callback
// could wake a render's status check: a render noticed by polling alone; render-callbacks is a render
// woken by the simulator's callback (its signal, the canceled backstop timer). session13-job-events
// and session13-notify-job-ended were recorded before job.ended read the spend ledger (session 14,
// patch job-ended-spend-from-ledger); job-events is recorded with it. session13-job-six-* are a
// window of six items two at a time, continued as new, recorded before items could wait for their
// needs (patch items-wait-for-their-needs); job-chain-* are two chains side by side with the patch,
// one shot failed and the one after it blocked, continued as new while shots waited. A failure here means
// a change would break jobs that are running right now.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundlePath } from '../../worker/bundle';

const dir = join(__dirname, '..', 'fixtures', 'histories');

describe('workflow replay', () => {
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as Record<string, string>;
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && f !== 'index.json')
    .sort();

  it('has recorded histories of a normal job, a failover and a continued-as-new job', () => {
    for (const name of [
      'job-normal',
      'render-normal',
      'job-failover',
      'render-failover',
      'job-continued-first-run',
      'job-continued-last-run',
      'job-takes',
      'render-take',
      'render-shared',
      'limiter',
      'job-takes-window-first-run',
      'job-takes-window-last-run',
      'render-rewrite-r1',
      'render-rewrite-r1-t2',
      'render-rewrite-r1-t3',
      'rewrite',
      'job-events',
      'notify-job-ended',
      'session13-job-events',
      'session13-notify-job-ended',
      'session13-render-polls-before-callbacks',
      'render-callbacks',
      'session13-job-six-first-run',
      'session13-job-six-last-run',
      'job-chain-first-run',
      'job-chain-last-run',
    ]) {
      assert.ok(files.includes(`${name}.json`), `missing ${name}.json`);
    }
  });

  it('knows the workflow id of every recorded history', () => {
    assert.deepEqual(Object.keys(index).sort(), files);
  });

  it('replays every recorded history without nondeterminism', async () => {
    const histories = files.map((file) => ({
      workflowId: index[file]!,
      history: historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8'))),
    }));
    const results = Worker.runReplayHistories({ workflowBundle: { codePath: workflowBundlePath } }, histories);
    let replayed = 0;
    for await (const result of results) {
      assert.equal(result.error, undefined, `${result.workflowId}: ${String(result.error)}`);
      replayed++;
    }
    assert.equal(replayed, files.length);
  });

  it('the continued-as-new job really continued as new', () => {
    const first = JSON.parse(readFileSync(join(dir, 'job-continued-first-run.json'), 'utf8')) as { events: Array<{ eventType: string }> };
    assert.ok(
      first.events.some((e) => /CONTINUED_AS_NEW/i.test(String(e.eventType))),
      'first run ended with continue-as-new',
    );
  });
});
