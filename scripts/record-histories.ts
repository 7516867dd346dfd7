// Records real workflow histories for the replay tests: a normal job, a job whose primary base
// address dies mid-run, and a job that continues as new. Run after changing workflows/ on purpose
// (a change that breaks replay of these histories would break running jobs in production):
//   npx tsx scripts/record-histories.ts
// `npx tsx scripts/record-histories.ts rewrites` records the shared prompt rewrite's histories only
// (render-rewrite-*, rewrite), leaving the others as they are.
// It overwrites the recordings of the previous code: copy them to a prefix first (as session5-*)
// and add them to index.json, so that jobs started by that code stay covered by the replay test.
// RECORD_ONLY=job-takes-window records those histories alone (before a patch, with the code before
// it) and keeps every other recording and its index entry.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startSimulator } from '../sim';
import { acceptKeylessJobsInThisWorker } from '../activities/job-key-check';
import { startTestTemporal } from '../test/support/temporal';
import { tempDir, writeJob } from '../test/support/jobs';
import { temporalCliPath } from '../worker/dev-server';
import { connectClient, connectWorker } from '../worker/temporal';
import { createReelflowWorker, runWorkerUntil } from '../worker/worker';
import { jobWorkflowId } from '../workflows/ids';
import { JobWorkflow } from '../workflows/job';
import type { JobInput } from '../workflows/types';
import { sendCallbackAddressesFromThisWorker } from '../activities/callback-address';
import { startCallbackListener } from '../worker/callback-listener';
import { TASK_CALLBACK_SIGNAL } from '../workflows/ids';
import { Worker } from '@temporalio/worker';
import { workflowSource } from '../worker/bundle';
import { chainOf, chainedActivities } from '../test/support/chain-activities';

const out = join(__dirname, '..', 'test', 'fixtures', 'histories');
const KEY = 'sk-record-histories-0000';
const CALLBACK_SECRET = Buffer.from('record-histories-callback-secret-0123456789');
/** Short waits, so a render of under a second is checked several times. */
const POLLS = 'polling:\n  initial: 100ms\n  max: 200ms\n  timeout: 5m';
/** File name -> the workflow id it was recorded under (child ids derive from it, so replay needs it). */
const only = process.env.RECORD_ONLY;
const index: Record<string, string> = existsSync(join(out, 'index.json'))
  ? (JSON.parse(readFileSync(join(out, 'index.json'), 'utf8')) as Record<string, string>)
  : {};

/** Exports a history the standard way (the Temporal CLI's JSON), as users record theirs too. */
function save(address: string, name: string, workflowId: string, runId?: string): void {
  const json = execFileSync(
    temporalCliPath(),
    ['workflow', 'show', '--address', address, '--workflow-id', workflowId, ...(runId ? ['--run-id', runId] : []), '--output', 'json'],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  writeFileSync(join(out, `${name}.json`), json);
  index[`${name}.json`] = workflowId;
  writeFileSync(join(out, 'index.json'), `${JSON.stringify(index, null, 2)}\n`);
  const events = (JSON.parse(json) as { events?: unknown[] }).events?.length ?? 0;
  process.stderr.write(`recorded ${name} (${events} events)\n`);
}

async function main(): Promise<void> {
  mkdirSync(out, { recursive: true });
  process.env.GATEWAY_API_KEY = KEY;
  // Its jobs are started here without a key fingerprint, as a worker with --accept-keyless-jobs takes them (docs/keys.md).
  acceptKeylessJobsInThisWorker(true);
  const temporal = await startTestTemporal();
  const sim = await startSimulator({ ports: [0, 0], keys: [KEY], renderMs: [300, 900], seed: 5 });
  const target = { address: temporal.address, namespace: 'default', connectionOptions: { address: temporal.address }, description: 'test' };
  const client = await connectClient(target);
  const connection = await connectWorker(target);
  const worker = await createReelflowWorker({ connection, namespace: 'default', taskQueue: 'record' });
  let stop!: () => void;
  const running = runWorkerUntil(
    worker,
    new Promise<void>((r) => {
      stop = r;
    }),
  );
  const start = (name: string, input: Omit<JobInput, 'jobFile'> & { jobFile: string }) =>
    client.workflow.start(JobWorkflow, { taskQueue: 'record', workflowId: jobWorkflowId(name), args: [input] });
  // Session 12: the takes of a prompt share one rewrite (workflows/rewrite.ts): the take that starts
  // the RewriteWorkflow child, one that finds it running and starts it again later, and the child.
  const recordSharedRewrite = async (dir: () => string, items: (p: string, n: number) => Array<{ id: string; prompt: string }>) => {
    const job = writeJob(dir(), {
      name: 'replay-rewrites',
      baseUrls: sim.urls,
      items: items('r', 1),
      extra: 'enhance:\n  model: claude-sonnet-4-6\n  max_tokens: 200',
    });
    writeFileSync(job, readFileSync(job, 'utf8').replace('defaults:\n', 'defaults:\n  variants: 3\n'));
    await (await start('replay-rewrites', { jobFile: job, runDate: '2026-01-01' })).result();
    for (const take of ['r1', 'r1~t2', 'r1~t3'])
      save(temporal.address, `render-rewrite-${take.replace('~', '-')}`, `${jobWorkflowId('replay-rewrites')}/${take}`);
    for await (const rewrite of client.workflow.list({ query: 'WorkflowType = "RewriteWorkflow"' })) {
      save(temporal.address, 'rewrite', rewrite.workflowId, rewrite.runId);
      break;
    }
  };
  const recordJobEvents = async (dir: () => string, items: (p: string, n: number) => Array<{ id: string; prompt: string }>) => {
    const receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end('ok')));
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const folder = dir();
    const settings = join(folder, 'notify.yaml');
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    writeFileSync(
      settings,
      `hook:\n  webhook: ${hook}\n  secret_env: RECORD_WEBHOOK_SECRET\n  events: [job.started, job.ended, item.failed]\n`,
    );
    process.env.REELFLOW_NOTIFY_CONFIG = settings;
    process.env.RECORD_WEBHOOK_SECRET = `whsec_${Buffer.from('record-histories-secret-0123456').toString('base64')}`;
    const job = writeJob(folder, { name: 'replay-events', baseUrls: sim.urls, items: items('e', 3), extra: 'notify: [hook]' });
    sim.setFaults({ failRate: 0.5 });
    try {
      await (await start('replay-events', { jobFile: job, runDate: '2026-01-01' })).result();
    } finally {
      sim.setFaults({ failRate: 0 });
    }
    save(temporal.address, 'job-events', jobWorkflowId('replay-events'));
    for await (const event of client.workflow.list({ query: 'WorkflowType = "NotifyWorkflow"' })) {
      await client.workflow.getHandle(event.workflowId).result();
      if (event.workflowId.endsWith('/job.ended')) save(temporal.address, 'notify-job-ended', event.workflowId);
    }
    receiver.close();
  };
  try {
    // A folder per job: an output location belongs to one job (docs/reruns.md).
    const dir = () => tempDir();
    const items = (p: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${p}${i + 1}`, prompt: `${p} ${i + 1}` }));

    if (process.argv[2] === 'rewrites') return await recordSharedRewrite(dir, items);

    // Session 12: takes of one prompt past the window (they share `index`), under a budget, continuing
    // as new with takes of a page not started yet.
    if (!only || only === 'job-takes-window') {
      const windowJob = writeJob(dir(), {
        name: 'replay-takes-window',
        baseUrls: sim.urls,
        items: items('w', 3),
        maxInFlight: 2,
        extra: 'pricing:\n  seedance-1-0-pro-250528:\n    per_video: 0.10\nbudget:\n  max_usd: 100',
      });
      writeFileSync(windowJob, readFileSync(windowJob, 'utf8').replace('defaults:\n', 'defaults:\n  variants: 3\n'));
      const windowHandle = await start('replay-takes-window', { jobFile: windowJob, runDate: '2026-01-01', historyBudget: 40 });
      // The code before the patch never ends this job (its second run read the plan again from the
      // shared index, not from the takes' place): what it did by then is the history.
      await Promise.race([windowHandle.result(), new Promise((r) => setTimeout(r, 25_000))]);
      await windowHandle.terminate('recorded').catch(() => undefined);
      save(temporal.address, 'job-takes-window-first-run', jobWorkflowId('replay-takes-window'), windowHandle.firstExecutionRunId);
      save(temporal.address, 'job-takes-window-last-run', jobWorkflowId('replay-takes-window'));
    }
    // Session 13: a job with notify targets (workflows/notify.ts): job.started, an item.failed per
    // failed item and job.ended, each an abandoned NotifyWorkflow; one event's own history.
    if (only === 'job-events') return await recordJobEvents(dir, items);
    // Session 13: a render noticed by polling alone (several checks), recorded by the code before
    // callbacks could wake its checks (hasPatch('callback-wakes-status-check')).
    if (only === 'render-polls-before-callbacks') {
      const polls = writeJob(dir(), { name: 'replay-polls', baseUrls: sim.urls, items: items('p', 1), polling: POLLS });
      await (await start('replay-polls', { jobFile: polls, runDate: '2026-01-01' })).result();
      save(temporal.address, 'session13-render-polls-before-callbacks', `${jobWorkflowId('replay-polls')}/p1`);
    }
    // Session 13: a render whose create carried a callback address, woken by the simulator's callback
    // (the signal in its history) before its backstop (workflows/render.ts, docs/callbacks.md).
    if (!only || only === 'render-callbacks') {
      const listener = await startCallbackListener({
        host: '127.0.0.1',
        port: 0,
        secret: CALLBACK_SECRET,
        warn: (line) => process.stderr.write(`${line}\n`),
        signal: async (id) => {
          await client.workflow.getHandle(id).signal(TASK_CALLBACK_SIGNAL);
          return 'signalled';
        },
      });
      sendCallbackAddressesFromThisWorker({ publicUrl: listener.url, secret: CALLBACK_SECRET });
      try {
        const job = writeJob(dir(), {
          name: 'replay-callbacks',
          baseUrls: sim.urls,
          items: items('b', 1),
          polling: 'polling:\n  initial: 100ms\n  max: 200ms\n  timeout: 5m\n  backstop: 1m',
          extra: 'models:\n  seedance-1-0-pro-250528:\n    callbacks: true',
        });
        await (await start('replay-callbacks', { jobFile: job, runDate: '2026-01-01' })).result();
        save(temporal.address, 'render-callbacks', `${jobWorkflowId('replay-callbacks')}/b1`);
      } finally {
        sendCallbackAddressesFromThisWorker(undefined);
        await listener.close();
      }
    }
    // Session 14: a window of six items, two at a time, continued as new, recorded before items could
    // wait for their needs (hasPatch('items-wait-for-their-needs')).
    if (only === 'window-before-needs') {
      const six = writeJob(dir(), { name: 'replay-six', baseUrls: sim.urls, items: items('s', 6), maxInFlight: 2, polling: POLLS });
      const handle = await start('replay-six', { jobFile: six, runDate: '2026-01-01', historyBudget: 60 });
      await handle.result();
      save(temporal.address, 'session13-job-six-first-run', jobWorkflowId('replay-six'), handle.firstExecutionRunId);
      save(temporal.address, 'session13-job-six-last-run', jobWorkflowId('replay-six'));
    }
    // Session 14: two chains side by side (docs/chains.md), one of whose shots fails so the shot after
    // it ends blocked, continued as new while shots wait for their needs (items-wait-for-their-needs).
    if (only === 'chain') {
      const left = chainOf('cl', 3);
      const right = chainOf('cr', 3);
      const chainWorker = await Worker.create({
        connection,
        namespace: 'default',
        taskQueue: 'record-chain',
        ...workflowSource(),
        activities: chainedActivities(() => ({ ...left.needs, ...right.needs })),
      });
      const chainRunning = chainWorker.run();
      const job = writeJob(dir(), {
        name: 'replay-chain',
        baseUrls: sim.urls,
        items: [...left.shots, ...right.shots],
        maxInFlight: 2,
        polling: POLLS,
      });
      sim.setFaults({ failPrompts: ['cr 2'] });
      try {
        const handle = await client.workflow.start(JobWorkflow, {
          taskQueue: 'record-chain',
          workflowId: jobWorkflowId('replay-chain'),
          args: [{ jobFile: job, runDate: '2026-01-01', historyBudget: 60 }],
        });
        await handle.result();
        save(temporal.address, 'job-chain-first-run', jobWorkflowId('replay-chain'), handle.firstExecutionRunId);
        save(temporal.address, 'job-chain-last-run', jobWorkflowId('replay-chain'));
      } finally {
        sim.setFaults({ failPrompts: [] });
        chainWorker.shutdown();
        await chainRunning;
      }
    }
    if (only) return;

    const normal = writeJob(dir(), { name: 'replay-normal', baseUrls: sim.urls, items: items('n', 3) });
    await (await start('replay-normal', { jobFile: normal, runDate: '2026-01-01' })).result();
    save(temporal.address, 'job-normal', jobWorkflowId('replay-normal'));
    save(temporal.address, 'render-normal', `${jobWorkflowId('replay-normal')}/n1`);

    const failover = writeJob(dir(), { name: 'replay-failover', baseUrls: sim.urls, items: items('f', 3) });
    const failing = await start('replay-failover', { jobFile: failover, runDate: '2026-01-01' });
    await new Promise((r) => setTimeout(r, 400));
    await sim.setPortMode(0, 'refuse');
    await failing.result();
    await sim.setPortMode(0, 'up');
    save(temporal.address, 'job-failover', jobWorkflowId('replay-failover'));
    save(temporal.address, 'render-failover', `${jobWorkflowId('replay-failover')}/f3`);

    const can = writeJob(dir(), { name: 'replay-can', baseUrls: sim.urls, items: items('c', 12), maxInFlight: 3 });
    const canHandle = await start('replay-can', { jobFile: can, runDate: '2026-01-01', historyBudget: 40 });
    await canHandle.result();
    save(temporal.address, 'job-continued-first-run', jobWorkflowId('replay-can'), canHandle.firstExecutionRunId);
    save(temporal.address, 'job-continued-last-run', jobWorkflowId('replay-can'));

    // Session 8: takes with seeds under a budget that reserves prompt rewrites, and renders that
    // hold a permit of the shared limiter (docs/takes.md, docs/costs.md, docs/limits.md).
    const takesDir = dir();
    const takes = writeJob(takesDir, {
      name: 'replay-takes',
      baseUrls: sim.urls,
      items: items('t', 2),
      extra: [
        'enhance:\n  model: claude-sonnet-4-6\n  max_tokens: 200',
        'pricing:\n  seedance-1-0-pro-250528:\n    per_video: 0.10\n  claude-sonnet-4-6:\n    per_million_input_tokens: 3\n    per_million_output_tokens: 15',
        'budget:\n  max_usd: 100',
      ].join('\n'),
    });
    writeFileSync(takes, readFileSync(takes, 'utf8').replace('defaults:\n', 'defaults:\n  variants: 2\n'));
    await (await start('replay-takes', { jobFile: takes, runDate: '2026-01-01' })).result();
    save(temporal.address, 'job-takes', jobWorkflowId('replay-takes'));
    save(temporal.address, 'render-take', `${jobWorkflowId('replay-takes')}/t1~t2`);

    const shared = writeJob(dir(), { name: 'replay-shared', baseUrls: sim.urls, items: items('s', 3) });
    writeFileSync(shared, readFileSync(shared, 'utf8').replace('concurrency:\n', 'concurrency:\n  shared:\n    max_in_flight: 1\n'));
    await (await start('replay-shared', { jobFile: shared, runDate: '2026-01-01' })).result();
    save(temporal.address, 'render-shared', `${jobWorkflowId('replay-shared')}/s2`);
    for await (const limiter of client.workflow.list({ query: 'WorkflowType = "LimiterWorkflow"' })) {
      save(temporal.address, 'limiter', limiter.workflowId);
    }
    await recordSharedRewrite(dir, items);
  } finally {
    stop();
    await running;
    await connection.close();
    await client.connection.close();
    await sim.close();
    await temporal.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`recording failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
