// Job events out, the parts a user meets after the job (docs/notifications.md): a delivery that
// run's own worker could not make before it ended is made by a background worker once the receiver
// is back; spend_usd is the job's ledger (what `status` shows) with or without a budget; a job
// canceled through Temporal itself says canceled; job.started and item.failed go to the targets
// that take them. The built CLI against a real Temporal server, the simulator and an HTTP receiver.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { useTemporalAndSimulator } from '../support/e2e';
import { isAlive, runCli, startCli } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';
import { until } from '../support/wait';
import { startReceiver, type Receiver } from '../support/receiver';
import { temporalCliPath } from '../../worker/dev-server';

const KEY = 'sk-test-notify-delivery-0123456789';
const SECRET = `whsec_${Buffer.from('reelflow-notify-delivery-secret0').toString('base64')}`;

describe('job events: delivery after the run, spend, Temporal cancel, job.started and item.failed', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [300, 800], seed: 36, eventSecret: SECRET });
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver?.close());

  function userEnv(dir: string, job: string): NodeJS.ProcessEnv {
    const file = join(dir, 'notify.yaml');
    writeFileSync(
      file,
      [
        'on-call:',
        `  webhook: ${receiver.url}/hook/${job}`,
        '  secret_env: TEST_WEBHOOK_SECRET',
        'late:',
        `  webhook: ${receiver.url}/late/${job}`,
        '  secret_env: TEST_WEBHOOK_SECRET',
        'everything:',
        `  webhook: ${receiver.url}/all/${job}`,
        '  secret_env: TEST_WEBHOOK_SECRET',
        '  events: [job.started, item.failed, job.ended]',
        '',
      ].join('\n'),
    );
    return { ...e2e.env, REELFLOW_NOTIFY_CONFIG: file, TEST_WEBHOOK_SECRET: SECRET };
  }
  const at = (kind: string, job: string) => receiver.seen.filter((r) => r.path === `/${kind}/${job}`);
  const verified = (r: Receiver['seen'][number]) =>
    new Webhook(SECRET).verify(r.body, r.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };

  it("a delivery still failing when run's own worker ends is made by a background worker once the receiver answers", async () => {
    const dir = tempDir();
    const name = 'notify-later';
    const env = userEnv(dir, name);
    const job = writeJob(dir, { name, baseUrls: e2e.sim.urls, items: [{ id: 'l-1', prompt: 'notify later 1' }], extra: 'notify: [late]' });
    const run = await runCli(['run', job], { env });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.ok(at('late', name).length >= 1 && at('late', name).every((r) => r.status === 503), 'refused while run lasted');
    const handed = /late: not delivered yet: a background worker \(pid (\d+)\) retries it/.exec(run.stdout);
    assert.ok(handed, run.stdout);
    const pid = Number(handed[1]);
    try {
      receiver.openLate(name);
      await until(() => at('late', name).some((r) => r.status === 200), 90_000, 'the delivery after run ended');
      const delivered = at('late', name).find((r) => r.status === 200)!;
      assert.equal(verified(delivered).type, 'job.ended');
      assert.equal(new Set(at('late', name).map((r) => r.headers['webhook-id'])).size, 1, 'one event, one webhook-id');
      // Its work done, the background worker ends by itself.
      await until(() => !isAlive(pid), 60_000, 'the background delivery worker to exit');
      const status = await runCli(['status', job], { env });
      assert.match(status.stdout, /notify job\.ended -> late: delivered \(attempt \d+\)/);
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('a background delivery worker that was stopped: status says so, and a later `worker --until-delivered` delivers', async () => {
    const dir = tempDir();
    const name = 'notify-resumed';
    const env = userEnv(dir, name);
    const job = writeJob(dir, {
      name,
      baseUrls: e2e.sim.urls,
      items: [{ id: 'r-1', prompt: 'notify resumed 1' }],
      extra: 'notify: [late]',
    });
    const run = await runCli(['run', job], { env });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const handed = /late: not delivered yet: a background worker \(pid (\d+)\)/.exec(run.stdout);
    assert.ok(handed, run.stdout);
    const pid = Number(handed[1]);
    process.kill(pid, 'SIGKILL'); // a reboot, say
    await until(() => !isAlive(pid), 30_000, 'the background worker gone');
    const status = await runCli(['status', job], { env });
    assert.match(status.stdout, /notify job\.ended -> late: retrying/);
    assert.match(
      status.stdout,
      new RegExp(`no worker carries these deliveries now: \`reelflow worker --until-delivered reelflow-${name}\``),
    );
    receiver.openLate(name);
    const resumed = startCli(['worker', '--until-delivered', `reelflow-${name}`], { env });
    const ended = await resumed.done;
    assert.equal(ended.code, 0, ended.stderr);
    assert.ok(
      at('late', name).some((r) => r.status === 200),
      'delivered by the later worker, which then exited',
    );
    assert.equal(new Set(at('late', name).map((r) => r.headers['webhook-id'])).size, 1, 'one event, one webhook-id');
  });

  it('spend_usd of a job without a budget is its ledger: the figure status shows', async () => {
    const dir = tempDir();
    const name = 'notify-spend';
    const env = userEnv(dir, name);
    const job = writeJob(dir, {
      name,
      baseUrls: e2e.sim.urls,
      items: [1, 2].map((i) => ({ id: `s-${i}`, prompt: `notify spend ${i}` })),
      extra: 'notify: [on-call]\npricing:\n  seedance-1-0-pro-250528:\n    per_video: 0.75',
    });
    const run = await runCli(['run', job], { env });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const status = await runCli(['status', job, '--json'], { env });
    const spent = (JSON.parse(status.stdout) as { spend: { spent_usd: number } | null }).spend?.spent_usd;
    assert.equal(spent, 1.5, status.stdout);
    const events = at('hook', name);
    assert.equal(events.length, 1);
    assert.equal(verified(events[0]!).data.spend_usd, spent);
  });

  it('a job canceled through Temporal itself (temporal workflow cancel) sends job.ended with outcome canceled, once', async () => {
    const dir = tempDir();
    const name = 'notify-tcancel';
    const env = userEnv(dir, name);
    const job = writeJob(dir, {
      name,
      baseUrls: e2e.sim.urls,
      items: [1, 2, 3, 4, 5, 6].map((i) => ({ id: `t-${i}`, prompt: `notify tcancel ${i}` })),
      maxInFlight: 1,
      extra: 'notify: [on-call]',
    });
    const run = startCli(['run', job], { env });
    await until(() => (e2e.sim.stats().createsByPrompt['notify tcancel 1'] ?? 0) > 0, 60_000, 'the first create');
    execFileSync(temporalCliPath(), ['workflow', 'cancel', '--address', e2e.temporal.address, '--workflow-id', `reelflow-${name}`]);
    const ended = await run.done;
    assert.match(ended.stdout, /notify on-call: delivered/, `${ended.stdout}\n${ended.stderr}`);
    const events = at('hook', name);
    assert.equal(events.length, 1, 'one job.ended');
    const event = verified(events[0]!);
    assert.equal(event.type, 'job.ended');
    assert.equal(event.data.outcome, 'canceled');
  });

  it('job.started and item.failed go to a target that takes them, with job.ended, once each', async () => {
    const dir = tempDir();
    const name = 'notify-all';
    const env = userEnv(dir, name);
    const job = writeJob(dir, {
      name,
      baseUrls: e2e.sim.urls,
      items: [{ id: 'a-1', prompt: 'notify all 1' }],
      extra: 'notify: [everything]',
    });
    e2e.sim.setFaults({ failRate: 1 });
    const run = await runCli(['run', job], { env }).finally(() => e2e.sim.setFaults({ failRate: 0 }));
    assert.notEqual(run.code, 0, run.stdout);
    await until(() => at('all', name).length >= 3, 30_000, 'three events');
    const events = at('all', name).map(verified);
    assert.deepEqual(events.map((e) => e.type).sort(), ['item.failed', 'job.ended', 'job.started']);
    const started = events.find((e) => e.type === 'job.started')!;
    assert.equal(started.data.job, name);
    const failed = events.find((e) => e.type === 'item.failed')!;
    assert.deepEqual(failed.data.item, { key: 'a-1', model: 'seedance-1-0-pro-250528', state: 'failed' });
    assert.ok(typeof failed.data.cause === 'string' && failed.data.cause.length > 0, 'the failure in cause');
    assert.equal(events.find((e) => e.type === 'job.ended')!.data.outcome, 'failed');
    assert.equal(new Set(at('all', name).map((r) => r.headers['webhook-id'])).size, 3, 'three events, three ids');
  });
});
