// Job events out, as a user meets them (docs/notifications.md): the built CLI runs jobs against a real
// Temporal server and the simulator; a real HTTP receiver on loopback plays the user's webhook, Slack
// and ntfy endpoints. Each way a job ends sends exactly one logical job.ended per target; a receiver
// answering 500 twice gets the same webhook-id three times while the job has already ended; the
// signature verifies with the Standard Webhooks reference library.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { useTemporalAndSimulator } from '../support/e2e';
import { isAlive, runCli, startCli } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';
import { until } from '../support/wait';
import { startReceiver } from '../support/receiver';

const KEY = 'sk-test-notify-0123456789abcd';
const SECRET = `whsec_${Buffer.from('reelflow-notify-test-secret-0123').toString('base64')}`;

/** A history with its payloads (base64 in the fetched history) as text, so what it holds can be searched. */
function readable(history: unknown): string {
  return JSON.stringify(history, (key, value: unknown) =>
    key === 'data' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : value,
  );
}

describe('job events out', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [300, 800], seed: 35, eventSecret: SECRET });
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver?.close());

  /** A user's notify.yaml whose targets post to /<kind>/<job> on the receiver, and the environment naming it. */
  function userEnv(dir: string, job: string): NodeJS.ProcessEnv {
    const file = join(dir, 'notify.yaml');
    writeFileSync(
      file,
      [
        'on-call:',
        `  webhook: ${receiver.url}/hook/${job}`,
        '  secret_env: TEST_WEBHOOK_SECRET',
        'flaky:',
        `  webhook: ${receiver.url}/flaky/${job}`,
        '  secret_env: TEST_WEBHOOK_SECRET',
        'studio-slack:',
        `  slack: ${receiver.url}/slack/${job}`,
        'phone:',
        `  ntfy: ${receiver.url}/ntfy/${job}`,
        'down-briefly:',
        `  webhook: ${receiver.url}/down/${job}`,
        '  secret_env: TEST_WEBHOOK_SECRET',
        '  retry_for: 2s',
        'demo:',
        `  webhook: ${e2e.sim.urls[0]}/__sim/events/${job}`,
        '  secret_env: TEST_WEBHOOK_SECRET',
        'forged:',
        `  webhook: ${e2e.sim.urls[0]}/__sim/events/forged`,
        '  secret_env: OTHER_WEBHOOK_SECRET',
        'down-long:',
        `  ntfy: ${receiver.url}/down/${job}`,
        '',
      ].join('\n'),
    );
    return {
      ...e2e.env,
      REELFLOW_NOTIFY_CONFIG: file,
      TEST_WEBHOOK_SECRET: SECRET,
      OTHER_WEBHOOK_SECRET: `whsec_${Buffer.from('not-the-simulator-secret-0123456').toString('base64')}`,
    };
  }

  const forJob = (job: string, kind: string) => receiver.seen.filter((r) => r.path === `/${kind}/${job}`);

  /** The one logical job.ended each target got: one request per webhook kind (flaky: three with one id). */
  function endedEvents(job: string) {
    const hooks = forJob(job, 'hook');
    assert.equal(hooks.length, 1, `one event to on-call: ${JSON.stringify(hooks.map((h) => h.body))}`);
    const hook = hooks[0]!;
    // The reference verifier: signature, id and timestamp as Standard Webhooks defines them.
    const verified = new Webhook(SECRET).verify(hook.body, hook.headers as Record<string, string>) as {
      type: string;
      data: Record<string, unknown>;
    };
    assert.equal(verified.type, 'job.ended');
    assert.equal(forJob(job, 'slack').length, 1, 'one Slack message');
    assert.equal(forJob(job, 'ntfy').length, 1, 'one ntfy message');
    return { hook, data: verified.data };
  }

  it('all items succeeded: one signed event per target; a receiver answering 500 twice gets one id three times, after the job ended', async () => {
    const dir = tempDir();
    const name = 'notify-ok';
    const items = [1, 2, 3].map((i) => ({ id: `ok-${i}`, prompt: `notify ok ${i}` }));
    const job = writeJob(dir, { name, baseUrls: e2e.sim.urls, items, extra: 'notify: [on-call, studio-slack, phone, flaky]' });
    const run = await runCli(['run', job, '--json'], { env: userEnv(dir, name) });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const summary = JSON.parse(run.stdout) as { notified: Array<{ event: string; target: string; state: string; attempts?: number }> };
    const { hook, data } = endedEvents(name);
    assert.equal(data.outcome, 'succeeded');
    assert.equal(data.job, name);
    assert.equal(data.workflow_id, `reelflow-${name}`);
    assert.deepEqual(data.counts, { succeeded: 3, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 });
    assert.equal(data.output, join(dir, 'out'));
    assert.equal(data.cause, null);
    assert.equal(JSON.stringify(hook.body).includes(SECRET), false);

    // `run` kept its worker until the deliveries were made, a few seconds at most.
    const flakyState = summary.notified.find((d) => d.event === 'job.ended' && d.target === 'flaky');
    assert.deepEqual(flakyState && [flakyState.state, flakyState.attempts], ['delivered', 3], JSON.stringify(summary.notified));
    const flaky = forJob(name, 'flaky');
    assert.equal(flaky.length, 3, 'two 500s, then delivered: no fourth');
    assert.equal(new Set(flaky.map((f) => f.headers['webhook-id'])).size, 1, 'the same webhook-id on every retry');
    assert.equal(flaky[0]!.headers['webhook-id'], hook.headers['webhook-id'], 'one event: one id, whichever target gets it');
    for (const f of flaky) new Webhook(SECRET).verify(f.body, f.headers as Record<string, string>);
    // The job's end was not held for the deliveries: its workflow closed before the retries came.
    const connection = await Connection.connect({ address: e2e.temporal.address });
    const client = new Client({ connection });
    const closed = (await client.workflow.getHandle(`reelflow-${name}`).describe()).closeTime;
    // What Temporal keeps (and its UI shows) holds target names, never an address or the secret.
    const histories: string[] = [];
    for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH 'reelflow-notify:reelflow-${name}/'` })) {
      histories.push(readable(await client.workflow.getHandle(w.workflowId).fetchHistory()));
    }
    histories.push(readable(await client.workflow.getHandle(`reelflow-${name}`).fetchHistory()));
    await connection.close();
    assert.equal(histories.length, 2, 'the job and its one job.ended event');
    for (const history of histories) {
      assert.ok(history.includes('studio-slack'), 'targets by name');
      assert.ok(
        !history.includes(`/slack/${name}`) && !history.includes(SECRET) && !history.includes(receiver.url),
        'no address, no secret',
      );
    }
    assert.ok(closed && closed.getTime() < flaky[1]!.at, `the job closed at ${closed?.toISOString()}, before the first retry`);
    assert.ok(flaky[2]!.at - flaky[1]!.at >= flaky[1]!.at - flaky[0]!.at, 'retried with backoff');

    const slack = JSON.parse(forJob(name, 'slack')[0]!.body) as { text: string; blocks: Array<{ type: string }> };
    assert.match(slack.text, /notify-ok succeeded \(3 succeeded\)/);
    assert.deepEqual(
      slack.blocks.map((b) => b.type),
      ['header', 'section', 'context'],
    );
    assert.ok(JSON.stringify(slack.blocks).includes(join(dir, 'out')), 'where the files are');
    const ntfy = forJob(name, 'ntfy')[0]!;
    assert.equal(ntfy.headers.title, 'notify-ok succeeded');
    assert.equal(ntfy.headers.priority, 'default');
    assert.equal(ntfy.headers.click, `file://${join(dir, 'out')}`);
    assert.match(ntfy.body, /^items: 3 succeeded$/m);
  });

  it('every item failed, then a budget reached, then a disabled key: the outcome and cause say which, once each', async () => {
    const dir = tempDir();
    e2e.sim.setFaults({ failRate: 1 });
    const failedJob = writeJob(dir, {
      name: 'notify-failed',
      baseUrls: e2e.sim.urls,
      items: [{ id: 'f-1', prompt: 'notify fails 1' }],
      extra: 'notify: [on-call, studio-slack, phone]',
    });
    const failed = await runCli(['run', failedJob], { env: userEnv(dir, 'notify-failed') });
    e2e.sim.setFaults({ failRate: 0 });
    assert.notEqual(failed.code, 0, failed.stdout);
    assert.match(failed.stdout, /notify on-call: delivered/);
    assert.equal(endedEvents('notify-failed').data.outcome, 'failed');
    const ntfy = forJob('notify-failed', 'ntfy')[0]!;
    assert.equal(ntfy.headers.priority, 'high');

    const budgetJob = writeJob(dir, {
      name: 'notify-budget',
      baseUrls: e2e.sim.urls,
      outputDir: './out-budget',
      items: [1, 2, 3].map((i) => ({ id: `b-${i}`, prompt: `notify budget ${i}` })),
      maxInFlight: 1,
      extra: 'notify: [on-call, studio-slack, phone]\npricing:\n  seedance-1-0-pro-250528:\n    per_video: 2\nbudget:\n  max_usd: 3',
    });
    const budget = await runCli(['run', budgetJob], { env: userEnv(dir, 'notify-budget') });
    assert.equal(budget.code, 1, `${budget.stdout}\n${budget.stderr}`);
    const budgetData = endedEvents('notify-budget').data;
    assert.equal(budgetData.outcome, 'budget_reached');
    assert.equal(budgetData.spend_usd, 2);
    assert.match(String(budgetData.cause), /budget reached/);

    const keyJob = writeJob(dir, {
      name: 'notify-key',
      baseUrls: e2e.sim.urls,
      outputDir: './out-key',
      items: [1, 2, 3, 4].map((i) => ({ id: `k-${i}`, prompt: `notify key ${i}` })),
      maxInFlight: 1,
      extra: 'notify: [on-call, studio-slack, phone]',
    });
    const keyRun = startCli(['run', keyJob], { env: userEnv(dir, 'notify-key') });
    await until(() => (e2e.sim.stats().createsByPrompt['notify key 1'] ?? 0) > 0, 60_000, 'the first create');
    e2e.sim.setKeys([]);
    const keyEnded = await keyRun.done;
    e2e.sim.setKeys([KEY]);
    assert.notEqual(keyEnded.code, 0, keyEnded.stdout);
    const keyData = endedEvents('notify-key').data;
    assert.equal(keyData.outcome, 'stopped');
    assert.match(String(keyData.cause), /key|auth|401/i);
  });

  it('a job canceled by `reelflow cancel` sends job.ended with outcome canceled, once', async () => {
    const dir = tempDir();
    const name = 'notify-cancel';
    const env = userEnv(dir, name);
    const job = writeJob(dir, {
      name,
      baseUrls: e2e.sim.urls,
      items: [1, 2, 3, 4, 5, 6].map((i) => ({ id: `c-${i}`, prompt: `notify cancel ${i}` })),
      maxInFlight: 1,
      extra: 'notify: [on-call, studio-slack, phone]',
    });
    const run = startCli(['run', job], { env });
    await until(() => (e2e.sim.stats().createsByPrompt['notify cancel 1'] ?? 0) > 0, 60_000, 'the first create');
    const cancel = await runCli(['cancel', job], { env });
    assert.equal(cancel.code, 0, `${cancel.stdout}\n${cancel.stderr}`);
    const ended = await run.done;
    assert.match(ended.stdout, /notify on-call: delivered/);
    assert.equal(endedEvents(name).data.outcome, 'canceled');
  });

  it('a receiver that stays down: given up after retry_for, or still retrying; run and status say which', async () => {
    const dir = tempDir();
    const name = 'notify-down';
    const env = userEnv(dir, name);
    const job = writeJob(dir, { name, baseUrls: e2e.sim.urls, items: [{ id: 'd-1', prompt: 'notify down 1' }] });
    const run = await runCli(['run', job, '--notify', 'down-briefly', '--notify', 'down-long'], { env });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(
      run.stdout,
      /notify down-briefly: gave up: gave up after \d attempts over 0 min \(retry_for\): down-briefly \(webhook at 127\.0\.0\.1:\d+\) answered 503: down for maintenance/,
    );
    assert.match(run.stdout, /notify down-long: retrying \(attempt \d+\): down-long \(ntfy at 127\.0\.0\.1:\d+\) answered 503/);
    // The one still retrying is handed to a background worker (test/e2e/notify-delivery.test.ts has it deliver).
    const handed = /down-long: not delivered yet: a background worker \(pid (\d+)\) retries it/.exec(run.stdout);
    assert.ok(handed, run.stdout);
    process.kill(Number(handed[1]), 'SIGTERM');
    await until(() => !isAlive(Number(handed[1])), 30_000, 'the background delivery worker to stop');
    assert.ok(!run.stdout.includes(`/down/${name}`), 'no address in what run prints');
    const status = await runCli(['status', job], { env });
    assert.equal(status.code, 0, `${status.stdout}\n${status.stderr}`);
    assert.match(status.stdout, /notify job\.ended -> down-briefly: gave up: /);
    assert.match(status.stdout, /notify job\.ended -> down-long: retrying \(attempt \d+\): /);
    const refused = await runCli(['run', job, '--notify', 'elsewhere'], { env });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--notify: notify target "elsewhere" not defined in .*notify\.yaml/);
  });

  it('the simulator receives a job event, checks its signature, and counts a webhook-id once', async () => {
    const dir = tempDir();
    const name = 'notify-sim';
    const env = userEnv(dir, name);
    const job = writeJob(dir, { name, baseUrls: e2e.sim.urls, items: [{ id: 's-1', prompt: 'notify sim 1' }] });
    const run = await runCli(['run', job, '--notify', 'demo'], { env });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /notify demo: delivered/);
    const received = e2e.sim.events().filter((e) => e.name === name);
    assert.deepEqual(
      received.map((e) => [e.type, e.job, e.outcome, e.deliveries]),
      [['job.ended', name, 'succeeded', 1]],
    );
    const again = await runCli(['notify', 'test', 'demo'], { env });
    assert.match(again.stdout, /demo answered 200: \{"received":"msg_test_/);
    const forged = await runCli(['notify', 'test', 'forged'], { env });
    assert.equal(forged.code, 1);
    assert.match(forged.stdout, /answered 401: \{"error":"webhook-signature does not match"\}/);
  });

  it('`notify test` sends a signed sample and prints the answer; an undefined target is refused', async () => {
    const dir = tempDir();
    const env = userEnv(dir, 'sample');
    const sent = await runCli(['notify', 'test', 'on-call'], { env });
    assert.equal(sent.code, 0, `${sent.stdout}\n${sent.stderr}`);
    assert.match(sent.stdout, /on-call answered 200: thanks/);
    const sample = forJob('sample', 'hook')[0]!;
    new Webhook(SECRET).verify(sample.body, sample.headers as Record<string, string>);
    const refused = await runCli(['notify', 'test', 'nobody'], { env });
    assert.equal(refused.code, 2, refused.stdout);
    assert.match(
      refused.stderr,
      /no target "nobody" in .*notify\.yaml \(defined: on-call, flaky, studio-slack, phone, down-briefly, demo, forged, down-long\)/,
    );
    const flaky = await runCli(['notify', 'test', 'flaky'], { env });
    assert.equal(flaky.code, 1);
    assert.match(flaky.stdout, /not delivered: flaky \(webhook at 127\.0\.0\.1:\d+\) answered 500: busy, try later/);
  });
});
