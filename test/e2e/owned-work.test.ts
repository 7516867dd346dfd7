// A worker carries only the work its owner meant (docs/keys.md): a `run`'s own worker only the job
// that run started, a fleet worker a keyless job only when its user opted in, and a key fingerprint
// only the job it was made for; a job found by name is checked to be the same job before `run`
// attaches to it. Real parts: a Temporal dev server, the simulator behind "hostile" loopback
// listeners that count the requests carrying the key, the built command; the second user is this
// test process, acting through the Temporal client as anyone who reaches the server can.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { startSimulator, type SimHandleExt } from '../../sim';
import { runCli, startCli, type CliResult, type CliRun } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';
import { recordingProxy, type RecordingProxy } from '../support/recording-proxy';
import { startTestTemporal, type TestTemporal } from '../support/temporal';
import { until, within } from '../support/wait';

const POLLING = 'polling:\n  initial: 300ms\n  max: 1s\n  timeout: 5m';
const KEY = 'sk-test-owned-AAAA-0123456789abcdef';

/** A listener another user runs on loopback: it forwards to the simulator and counts what carried the key. */
interface Listener extends RecordingProxy {
  withKey: () => number;
  creates: () => number;
}

async function listener(target: string): Promise<Listener> {
  let withKey = 0;
  let creates = 0;
  const proxy = await recordingProxy(target, (req) => {
    if ((req.headers.authorization ?? '').includes(KEY)) withKey++;
    if (req.method === 'POST') creates++;
  });
  return { ...proxy, withKey: () => withKey, creates: () => creates };
}

/** A job of `items` shots on one base address, two at a time. */
function writeJobFile(dir: string, name: string, baseUrl: string, items: number): string {
  return writeJob(dir, {
    name,
    baseUrls: [baseUrl],
    maxInFlight: 2,
    polling: POLLING,
    items: Array.from({ length: items }, (_, i) => ({ prompt: `shot ${i + 1} of ${name}` })),
  });
}

/** Ends a command that should have ended by now (the old code follows a job forever): its result, or undefined. */
async function endedWithin(run: CliRun, ms: number): Promise<CliResult | undefined> {
  const result = await within(run.done, ms, undefined);
  if (!result) {
    process.kill(-run.child.pid!, 'SIGKILL');
    await run.done;
  }
  return result;
}

/** The failure's whole chain of messages, as a user reading the workflow's failure sees it. */
function failureText(error: unknown): string {
  const parts: string[] = [];
  for (let e = error as (Error & { cause?: unknown }) | undefined; e; e = e.cause as typeof e) parts.push(e.message);
  return parts.join(' <- ');
}

describe('owned work: a worker runs only what its owner meant', () => {
  let temporal: TestTemporal;
  let sim: SimHandleExt;
  let client: Client;
  let config: string;
  const envWith = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
    ...temporal.env,
    GATEWAY_API_KEY: undefined,
    XDG_CONFIG_HOME: config,
    REELFLOW_CONFIG: undefined,
    REELFLOW_TASK_QUEUE: undefined,
    ...extra,
  });

  before(async () => {
    temporal = await startTestTemporal();
    sim = await startSimulator({ ports: [0], renderMs: [1500, 2500], seed: 31, keys: [KEY] });
    client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
    config = tempDir('reelflow-owned-config-');
  });
  after(async () => {
    await client?.connection.close();
    await sim?.close();
    await temporal?.stop();
  });

  it("a run's own worker refuses a job and a child-like workflow another user starts on its queue; the owner's job completes", async () => {
    const own = await listener(sim.urls[0]!);
    const hostile = await listener(sim.urls[0]!);
    try {
      const ownJob = writeJobFile(tempDir(), 'owned-run', own.url, 6);
      const run = startCli(['run', ownJob], { env: envWith({ GATEWAY_API_KEY: KEY }) });
      await run.waitFor(/owned-run: started/);
      const ownId = 'reelflow-owned-run';
      const queue = (await client.workflow.getHandle(ownId).describe()).taskQueue;
      assert.match(queue, /^reelflow-run-/);

      // The other user's own job, keyless, its gateway their listener, on the run's queue.
      const intruderJob = writeJobFile(tempDir(), 'intruder', hostile.url, 1);
      const intruder = await client.workflow.start('JobWorkflow', {
        taskQueue: queue,
        workflowId: 'reelflow-intruder',
        args: [{ jobFile: intruderJob }],
      });
      // And an item workflow copied from the owner's, under an id of the owner's job, pointed at their listener.
      let childId: string | undefined;
      await until(
        async () => {
          for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH '${ownId}/'` })) childId ??= w.workflowId;
          return childId !== undefined;
        },
        30_000,
        "an item workflow of the owner's job",
      );
      const history = await client.workflow.getHandle(childId!).fetchHistory();
      const payloads = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads!;
      const copied = await decodeFromPayloadsAtIndex<{ settings: { gateway: { baseUrls: string[] } }; item: { key: string } }>(
        client.options.loadedDataConverter,
        0,
        payloads,
      );
      copied.settings.gateway.baseUrls = [hostile.url];
      copied.item.key = 'forged';
      const forged = await client.workflow.start('RenderWorkflow', {
        taskQueue: queue,
        workflowId: `${ownId}/forged`,
        args: [copied],
      });

      const refused = await intruder.result().then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.ok(refused instanceof WorkflowFailedError, `the intruder's job failed (got ${String(refused)})`);
      assert.match(failureText(refused), /reelflow-intruder/, 'the refusal names the workflow');
      await forged.result().catch(() => undefined);
      const done = await run.done;
      assert.equal(done.code, 0, done.stderr + done.stdout);
      assert.match(done.stdout, /owned-run: 6 of 6 succeeded/);
      assert.equal(hostile.withKey(), 0, 'no request carrying the key reached the other user’s listener');
      assert.ok(own.withKey() > 0);
    } finally {
      await own.close();
      await hostile.close();
    }
  });

  it('a fleet worker refuses a keyless job unless its user opted in (--accept-keyless-jobs)', async () => {
    const hostile = await listener(sim.urls[0]!);
    try {
      const worker = startCli(['worker'], { env: envWith({ GATEWAY_API_KEY: KEY }) });
      await worker.waitFor(/polling task queue/);
      const job = writeJobFile(tempDir(), 'keyless-refused', hostile.url, 2);
      const refused = await runCli(['run', job, '--no-worker'], { env: envWith({}) });
      worker.child.kill('SIGTERM');
      await worker.done;
      assert.notEqual(refused.code, 0, refused.stdout);
      assert.match(refused.stdout + refused.stderr, /started without a key fingerprint.*--accept-keyless-jobs/s);
      assert.equal(hostile.withKey(), 0, 'the worker sent its key nowhere');

      const optedIn = startCli(['worker', '--accept-keyless-jobs'], { env: envWith({ GATEWAY_API_KEY: KEY }) });
      await optedIn.waitFor(/polling task queue/);
      const job2 = writeJobFile(tempDir(), 'keyless-accepted', hostile.url, 2);
      const accepted = await runCli(['run', job2, '--no-worker'], { env: envWith({}) });
      optedIn.child.kill('SIGTERM');
      await optedIn.done;
      assert.equal(accepted.code, 0, accepted.stderr + accepted.stdout);
      assert.ok(hostile.withKey() > 0, 'with the opt-in, the fleet’s key carries the job');
    } finally {
      await hostile.close();
    }
  });

  it("a fingerprint copied from another job's input does not open a worker", async () => {
    const own = await listener(sim.urls[0]!);
    const hostile = await listener(sim.urls[0]!);
    const worker = startCli(['worker'], { env: envWith({ GATEWAY_API_KEY: KEY }) });
    try {
      await worker.waitFor(/polling task queue/);
      const job = writeJobFile(tempDir(), 'fingerprinted', own.url, 1);
      const first = await runCli(['run', job, '--no-worker'], { env: envWith({ GATEWAY_API_KEY: KEY }) });
      assert.equal(first.code, 0, first.stderr + first.stdout);
      const history = await client.workflow.getHandle('reelflow-fingerprinted').fetchHistory();
      const payloads = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads!;
      const { keyFingerprint } = await decodeFromPayloadsAtIndex<{ keyFingerprint?: string }>(
        client.options.loadedDataConverter,
        0,
        payloads,
      );
      assert.ok(keyFingerprint, 'the job carries its starter’s fingerprint');

      const copycatJob = writeJobFile(tempDir(), 'copycat', hostile.url, 1);
      const copycat = await client.workflow.start('JobWorkflow', {
        taskQueue: 'reelflow',
        workflowId: 'reelflow-copycat',
        args: [{ jobFile: copycatJob, keyFingerprint }],
      });
      const result = await copycat.result().then(
        (r: { stoppedBy?: { message: string }; fatal?: string }) => r.stoppedBy?.message ?? r.fatal ?? 'completed',
        (error: unknown) => failureText(error),
      );
      assert.match(result, /not the key the job was started with|fingerprint/, result);
      assert.equal(hostile.withKey(), 0, 'the copied fingerprint sent the key nowhere');
    } finally {
      worker.child.kill('SIGTERM');
      await worker.done;
      await own.close();
      await hostile.close();
    }
  });

  it("run of a job whose name another user's running job holds refuses and never follows theirs", async () => {
    const theirs = await listener(sim.urls[0]!);
    const mine = await listener(sim.urls[0]!);
    try {
      // Their keyless job on the shared queue, no worker carrying it yet: it stays running.
      const theirJob = writeJobFile(tempDir(), 'spring-campaign', theirs.url, 3);
      const squatter = startCli(['run', theirJob, '--no-worker'], { env: envWith({}) });
      await squatter.waitFor(/spring-campaign: started/);
      process.kill(-squatter.child.pid!, 'SIGTERM');
      await squatter.done;

      const myJob = writeJobFile(tempDir(), 'spring-campaign', mine.url, 3);
      const result = await endedWithin(startCli(['run', myJob], { env: envWith({ GATEWAY_API_KEY: KEY }) }), 45_000);
      assert.ok(result, 'run ended instead of following the other job');
      assert.equal(result.code, 2, result.stderr + result.stdout);
      assert.doesNotMatch(result.stderr, /already running: attached/);
      assert.ok(result.stderr.includes(theirJob), `names whose job it is: ${result.stderr}`);
      assert.match(result.stderr, /name:/, 'says how to run yours');
      assert.ok(!result.stderr.includes(KEY));
      assert.equal(mine.creates(), 0);
    } finally {
      await client.workflow
        .getHandle('reelflow-spring-campaign')
        .terminate('test over')
        .catch(() => undefined);
      await theirs.close();
      await mine.close();
    }
  });
});
