// Job events of scheduled runs on a fleet (docs/notifications.md, "Fleets and schedules"): the
// workers carry the run and its events, with their own notify.yaml. A run whose worker is killed
// with SIGKILL mid-run notifies once; a job file naming a target the workers do not define is told
// at apply time, and the worker's run gives that name up with a reason `status` shows. Real
// Temporal, two real `reelflow worker` processes, the simulator as gateway and event receiver.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli, startCli, type CliRun } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';
import { sleep, until } from '../support/wait';

const KEY = 'sk-test-notify-schedule-0123456789';
const SECRET = `whsec_${Buffer.from('reelflow-notify-schedule-secret0').toString('base64')}`;

describe('job events of scheduled runs on a fleet', { timeout: 300_000 }, () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [2_000, 3_000], seed: 37, eventSecret: SECRET });
  const workers: CliRun[] = [];
  after(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.done));
  });

  /** A notify.yaml defining `names`, each posting to the simulator's receiver /__sim/events/<job>. */
  function notifyFile(dir: string, file: string, job: string, names: string[]): string {
    const path = join(dir, file);
    const lines = names.flatMap((n) => [`${n}:`, `  webhook: ${e2e.sim.urls[0]}/__sim/events/${job}`, '  secret_env: TEST_WEBHOOK_SECRET']);
    writeFileSync(path, `${lines.join('\n')}\n`);
    return path;
  }

  function scheduledJob(dir: string, name: string, notify: string, items: number): string {
    return writeJob(dir, {
      name,
      baseUrls: e2e.sim.urls,
      items: Array.from({ length: items }, (_, i) => ({ id: `s${i + 1}`, prompt: `${name} shot ${i + 1}` })),
      maxInFlight: 2,
      polling: 'polling:\n  initial: 500ms\n  max: 1s\n  timeout: 2m',
      extra: `notify: [${notify}]\nschedule:\n  cron: "0 3 * * *"\n  timezone: UTC\n  overlap: skip`,
    });
  }

  async function startWorker(env: NodeJS.ProcessEnv): Promise<CliRun> {
    const worker = startCli(['worker'], { env });
    workers.push(worker);
    await worker.waitFor(/polling task queue/, 60_000);
    return worker;
  }

  async function resultOf(runId: string): Promise<{ counts: { succeeded: number; unknown: number } }> {
    const connection = await Connection.connect({ address: e2e.temporal.address });
    try {
      return await new Client({ connection }).workflow.getHandle(runId).result();
    } finally {
      await connection.close();
    }
  }

  let survivor: CliRun | undefined;
  let workerEnv: NodeJS.ProcessEnv;

  it('a scheduled run on two workers, one killed with SIGKILL mid-run, sends job.ended once', async () => {
    const dir = tempDir();
    const name = 'sched-notify';
    const submitter = { ...e2e.env, REELFLOW_NOTIFY_CONFIG: notifyFile(dir, 'user.yaml', name, ['demo']) };
    workerEnv = { ...e2e.env, REELFLOW_NOTIFY_CONFIG: notifyFile(dir, 'worker.yaml', name, ['demo']), TEST_WEBHOOK_SECRET: SECRET };
    const job = scheduledJob(dir, name, 'demo', 6);
    const applied = await runCli(['schedule', 'apply', job], { env: submitter });
    assert.equal(applied.code, 0, applied.stderr + applied.stdout);
    const doomed = await startWorker(workerEnv);
    survivor = await startWorker(workerEnv);
    const trigger = await runCli(['schedule', 'trigger', job], { env: submitter });
    assert.equal(trigger.code, 0, trigger.stderr + trigger.stdout);
    const runId = /started run (\S+);/.exec(trigger.stdout)?.[1];
    assert.ok(runId, trigger.stdout);
    await until(
      () => Object.keys(e2e.sim.stats().createsByPrompt).filter((p) => p.startsWith(name)).length >= 3,
      60_000,
      'renders under way',
    );
    doomed.child.kill('SIGKILL');
    const killed = await doomed.done;
    assert.equal(killed.signal, 'SIGKILL');
    const result = await resultOf(runId);
    // A create the killed worker had in flight may end unknown (its sending unproven: docs/deploy.md, Drain).
    assert.equal(result.counts.succeeded + result.counts.unknown, 6, JSON.stringify(result));
    assert.ok(result.counts.succeeded >= 4, JSON.stringify(result));
    const outcome = result.counts.succeeded === 6 ? 'succeeded' : 'partial';
    await until(() => e2e.sim.events().some((e) => e.name === name), 60_000, 'the job.ended event');
    await sleep(3_000); // time for a second event, were one sent
    const received = e2e.sim.events().filter((e) => e.name === name);
    assert.deepEqual(
      received.map((e) => [e.type, e.outcome, e.deliveries]),
      [['job.ended', outcome, 1]],
    );
  });

  it("schedule apply says the workers' notify.yaml must define the job's targets; a worker that lacks one gives it up, saying why", async () => {
    assert.ok(survivor, 'the worker of the test before');
    const dir = tempDir();
    const name = 'sched-undefined';
    // The submitter defines both; the workers (their notify.yaml from the test before) define demo alone.
    const submitter = { ...e2e.env, REELFLOW_NOTIFY_CONFIG: notifyFile(dir, 'user.yaml', name, ['demo', 'elsewhere']) };
    const job = scheduledJob(dir, name, 'demo, elsewhere', 1);
    const applied = await runCli(['schedule', 'apply', job], { env: submitter });
    assert.equal(applied.code, 0, applied.stderr + applied.stdout);
    assert.match(
      applied.stdout + applied.stderr,
      /notify: demo, elsewhere are looked up in the notify\.yaml of the worker that carries each run, not in yours: every worker must define them/,
    );
    const trigger = await runCli(['schedule', 'trigger', job], { env: submitter });
    assert.equal(trigger.code, 0, trigger.stderr + trigger.stdout);
    const runId = /started run (\S+);/.exec(trigger.stdout)?.[1];
    assert.ok(runId, trigger.stdout);
    const result = await resultOf(runId);
    assert.equal(result.counts.succeeded, 1, 'the renders do not depend on the notify settings');
    let shown = '';
    await until(
      async () => {
        shown = (await runCli(['status', runId], { env: submitter })).stdout;
        return /notify job\.ended -> elsewhere: gave up/.test(shown);
      },
      60_000,
      `status to show the delivery given up: ${shown}`,
    );
    assert.match(
      shown,
      /notify job\.ended -> elsewhere: gave up: notify target "elsewhere" is not defined in this worker's .*worker\.yaml/,
    );
    assert.match(shown, /notify job\.ended -> demo: delivered/);
  });
});
