// Workflow unit tests: the real workflow code on Temporal's time-skipping test server (Java, in
// memory; provisioned by scripts/test-server.sh), with stub activities. While the client awaits a
// workflow's result, the server jumps to its next timer whenever nothing else is in progress, so
// renders of minutes and polling timers of minutes pass in milliseconds; the rest of the time its
// clock runs at normal speed, which gives a test the time to look at a job in flight and cancel it.
//
// This is the SDK's TestWorkflowEnvironment.createTimeSkipping() environment, except that the
// server is started here: that helper gives up on a server that does not answer within 5 s, which
// a JVM on a loaded 2-core machine can miss.
//
// One server per job: the test server (1.38.0) stops skipping time for good once a child workflow
// ends after the parent run that started it has closed (its lock "processCompleteWorkflowExecution
// notify parent" waits for a parent that is gone). That happens to the abandoned children of a job
// that ended or continued as new; from then on its clock only runs at normal speed.
import { execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { after, afterEach, before, beforeEach } from 'node:test';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import { Connection, type WorkflowClient, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
// What createTimeSkipping() uses to reach the test server's own service (its clock): internal to the SDK.
import { InternalConnectionOptionsSymbol, type InternalConnectionOptions } from '@temporalio/client/lib/connection';
import { msToTs, tsToMs } from '@temporalio/common/lib/time';
import { TimeSkippingWorkflowClient } from '@temporalio/testing';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type * as activities from '../../activities/definitions';
import { itemWorkflowState } from '../../activities/item-workflow';
import { loadJobFile } from '../../jobfile';
import type { JobSettings, PlanItem } from '../../jobfile/plan';
import type { ManifestRow } from '../../storage/manifest/row';
import { freePort } from '../../worker/dev-server';
import { projectRoot } from '../../worker/bundle';
import { jobWorkflowId } from '../../workflows/ids';
import { JobWorkflow } from '../../workflows/job';
import type { JobInput, JobResult } from '../../workflows/types';
import { tempDir, writeJob } from './jobs';
import { workflowBundleFromSources } from './workflow-bundle';

const READY_TIMEOUT_MS = 60_000;
/**
 * A server lives for one test (seconds), so the JIT's optimising tier and the parallel collector
 * only cost CPU it never earns back: with the quick compiler alone and the serial collector, a
 * workflow test file takes about a fifth less CPU (job-budget.test.ts: 102 s of CPU before, see below).
 */
const SHORT_LIVED_JVM = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';
/** The SDK logs every bundle and worker state change at INFO on stderr: keep warnings only. */
const quiet = new DefaultLogger('WARN');
let runtimeInstalled = false;

export interface TimeSkippingTemporal {
  /** Awaiting a workflow's result through it lets time skip. */
  workflows: WorkflowClient;
  /** For workers. */
  connection: NativeConnection;
  /** The server's clock, which workflows see (activities run on the machine's). */
  now(): Promise<number>;
  /** Lets the server's clock run `ms` ahead (skipping), as an activity that takes that long would see it. */
  sleep(ms: number): Promise<void>;
  stop(): Promise<void>;
}

/** The server's launcher, from the project's script (which fetches it on first use). */
function launcherPath(): string {
  return execFileSync('bash', [join(projectRoot, 'scripts', 'test-server.sh'), '--print-path'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/** For a test that reads the lines workflows log: the process's one Runtime, with its logger, before the server starts. */
export function logWorkersTo(logger: DefaultLogger): void {
  Runtime.install({ logger });
  runtimeInstalled = true;
}

/** Tries on a fresh port when another process took the free one before the JVM bound it (a loaded machine). */
const PORT_TRIES = 3;

export async function startTimeSkippingTemporal(): Promise<TimeSkippingTemporal> {
  if (!runtimeInstalled) Runtime.install({ logger: quiet });
  runtimeInstalled = true;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePort();
    } catch (error) {
      if (attempt >= PORT_TRIES || !/Address already in use/.test(String(error))) throw error;
    }
  }
}

async function startOnFreePort(): Promise<TimeSkippingTemporal> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const child = spawn(launcherPath(), [String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, JDK_JAVA_OPTIONS: [process.env.JDK_JAVA_OPTIONS, SHORT_LIVED_JVM].filter(Boolean).join(' ') },
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  });
  // A test process that dies early must not leave the JVM behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stopServer = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  let connection: NativeConnection | undefined;
  while (!connection) {
    try {
      connection = await NativeConnection.connect({ address });
    } catch (error) {
      if (child.exitCode !== null || Date.now() > deadline) {
        await stopServer();
        throw new Error(`the time-skipping test server at ${address} did not start (${String(error)}): ${output.trim()}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const withTestService: InternalConnectionOptions = { address, [InternalConnectionOptionsSymbol]: { supportsTestService: true } };
  const clientConnection = await Connection.connect(withTestService);
  const testService = clientConnection.testService!;
  return {
    workflows: new TimeSkippingWorkflowClient({ connection: clientConnection, namespace: 'default' }),
    connection,
    now: async () => tsToMs((await testService.getCurrentTime({})).time),
    sleep: async (ms) => {
      await testService.unlockTimeSkippingWithSleep({ duration: msToTs(ms) });
    },
    async stop() {
      await clientConnection.close();
      await connection.close();
      await stopServer();
    },
  };
}

/**
 * The workflows bundled from their sources: unit tests of workflow logic test the code as it is
 * now, not the last build's bundle (worker/bundle.ts workflowSource()). Built once per state of the
 * sources, not once per file (./workflow-bundle.ts).
 */
export function bundleWorkflowsFromSource(): Promise<{ code: string }> {
  return workflowBundleFromSources(quiet);
}

/**
 * For a describe block: the workflow bundle once, and a fresh time-skipping server for each test
 * (one server per job, see the note at the top). Read `.bundle` and `.env` inside the tests.
 *
 * A JVM takes seconds to start, so the next test's server starts while this one runs (and the
 * first while the workflows bundle): a test waits for a server only when its own was not ready.
 */
export function timeSkippingPerTest(): { bundle: { code: string }; env: TimeSkippingTemporal } {
  const state = {} as { bundle: { code: string }; env: TimeSkippingTemporal };
  let next: Promise<TimeSkippingTemporal> | undefined;
  const startNext = () => {
    next = startTimeSkippingTemporal();
    // Its failure is the next test's to report, when it takes the server.
    next.catch(() => undefined);
  };
  before(async () => {
    startNext();
    state.bundle = await bundleWorkflowsFromSource();
  });
  beforeEach(async () => {
    const server = next ?? startTimeSkippingTemporal();
    startNext();
    state.env = await server;
  });
  afterEach(() => state.env.stop());
  after(async () => {
    const unused = next;
    next = undefined;
    await (await unused?.catch(() => undefined))?.stop();
  });
  return state;
}

/** A job's settings and items, from a job file written and loaded as a user's would be. */
export async function planFor(
  name: string,
  prompts: string[],
  settings: Partial<JobSettings> = {},
): Promise<{ settings: JobSettings; items: PlanItem[] }> {
  const dir = tempDir('reelflow-unit-');
  const loaded = await loadJobFile(
    writeJob(dir, { name, baseUrls: ['http://127.0.0.1:9'], items: prompts.map((prompt) => ({ prompt })) }),
    { runDate: '2025-01-01' },
  );
  rmSync(dir, { recursive: true });
  if (!loaded.ok) throw new Error(`test job file invalid: ${JSON.stringify(loaded.errors)}`);
  const { jobFile: _file, runDate: _date, items, warnings: _warnings, ...loadedSettings } = loaded.plan;
  return { settings: { ...loadedSettings, ...settings }, items };
}

/** What the stubs saw, in order, on the server's clock. */
export type StubEvent = { kind: 'create'; prompt: string; at: number } | { kind: 'record'; prompt: string; at: number; row: ManifestRow };

export interface StubOptions {
  /** Render time on the server's clock, from a successful create until checks report it finished. */
  renderMs: number;
  /**
   * Runs before each create with the prompt and how many creates of it came before; it may throw
   * (a failed create) or never settle (a create Temporal never hears from again).
   */
  beforeCreate?: (prompt: string, earlier: number) => Promise<void>;
}

/**
 * The activities the job and render workflows call, as plain functions under the same names: the
 * gateway renders every task in `renderMs`, storage keeps nothing. (No enhance step in these
 * plans; `createTask` is only for histories from before the create marker.)
 */
export function stubActivities(env: TimeSkippingTemporal, plan: { settings: JobSettings; items: PlanItem[] }, options: StubOptions) {
  const events: StubEvent[] = [];
  const creates = new Map<string, number>();
  const stubs: Omit<
    typeof activities,
    | 'enhancePrompt'
    | 'createTask'
    | 'askForPermit'
    | 'permitHoldersRunning'
    | 'deliverEvent'
    | 'notifySubscriptions'
    | 'jobSpendUsd'
    | 'assembleFilm'
  > = {
    async preparePlan() {
      return { settings: plan.settings, runDate: '2025-01-01', digest: 'stub', itemCount: plan.items.length };
    },
    async readPlanItems({ offset, limit }) {
      const items = plan.items.slice(offset, offset + limit);
      return { items, nextOffset: offset + items.length };
    },
    async createTaskMarked({ request }) {
      const earlier = creates.get(request.prompt) ?? 0;
      creates.set(request.prompt, earlier + 1);
      await options.beforeCreate?.(request.prompt, earlier);
      const at = await env.now();
      events.push({ kind: 'create', prompt: request.prompt, at });
      return { taskId: `${request.prompt}#${earlier + 1}`, baseUrl: 'http://127.0.0.1:9', createdAt: at };
    },
    async checkTask({ createdAt }) {
      const finished = (await env.now()) - createdAt >= options.renderMs;
      return { state: finished ? 'succeeded' : 'running', baseUrl: 'http://127.0.0.1:9' };
    },
    async downloadVideo({ outputName }) {
      return {
        file: `${outputName}.mp4`,
        location: 'stub',
        bytes: 1,
        sha256: '0'.repeat(64),
        baseUrl: 'http://127.0.0.1:9',
        servedBy: 'http://127.0.0.1:9',
      };
    },
    async recordItem({ row }) {
      events.push({ kind: 'record', prompt: row.prompt, at: await env.now(), row });
    },
    async snapshotManifest() {
      return { location: 'stub', items: 0 };
    },
    // Not a stub: it reads the test server through the worker's client.
    itemWorkflowState,
  };
  return { stubs, events, creates };
}

/** Settles only when the worker cancels it (at shutdown): an activity nobody works on any more. */
export function neverHeardFrom(): Promise<never> {
  return new Promise((_, reject) => {
    Context.current().cancelled.catch(reject);
  });
}

/**
 * Runs one JobWorkflow to its end on a worker of its own with these activities; `whileRunning`
 * gets the job's handle first (time skips only once the job's result is awaited).
 */
export async function runJob(
  env: TimeSkippingTemporal,
  bundle: { code: string },
  stubs: object,
  name: string,
  input: Omit<JobInput, 'jobFile'> = {},
  whileRunning?: (handle: WorkflowHandleWithFirstExecutionRunId<typeof JobWorkflow>) => Promise<void>,
): Promise<JobResult> {
  const taskQueue = `unit-${name}`;
  const worker = await Worker.create({
    connection: env.connection,
    taskQueue,
    workflowBundle: bundle,
    activities: stubs,
    shutdownGraceTime: '1s',
  });
  // A job that never ends must fail its test, not keep this worker (and so the test file's process,
  // and the whole suite) running after the test's own timeout: runUntil stops the worker either way.
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`job ${name} did not end within ${RUN_JOB_LIMIT_MS / 1000} s of real time`)),
      RUN_JOB_LIMIT_MS,
    );
  });
  try {
    return await worker.runUntil(
      Promise.race([
        hang,
        (async () => {
          const handle = await env.workflows.start(JobWorkflow, {
            taskQueue,
            workflowId: jobWorkflowId(name),
            args: [{ jobFile: `${name}.yaml`, ...input }],
          });
          await whileRunning?.(handle);
          return handle.result();
        })(),
      ]),
    );
  } finally {
    clearTimeout(timer);
  }
}

/** Real time a job run by runJob may take, time skipping included (the tests' own timeouts are 60 s and more). */
const RUN_JOB_LIMIT_MS = 150_000;
