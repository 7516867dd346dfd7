// A job spends only the key of the person who started it, and only where that person allows
// (docs/keys.md). Real parts: a Temporal dev server, the simulator behind key-recording proxies,
// the built command. The simulator accepts every key used here, so a key that reaches the wrong
// gateway is seen by the proxy (and paid for) instead of being refused by the gateway.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type SimHandleExt } from '../../sim';
import { recordedServer } from '../../worker/dev-server';
import { isAlive, runCli, startCli } from '../support/cli';
import { tempDir } from '../support/jobs';
import { recordingProxy, type RecordingProxy } from '../support/recording-proxy';
import { startTestTemporal, type TestTemporal } from '../support/temporal';
import { within } from '../support/wait';

const KEY_A = 'sk-test-keys-AAAA-0123456789abcdef';
const KEY_B = 'sk-test-keys-BBBB-0123456789abcdef';
const OTHER_SECRETS = { OPENAI_API_KEY: KEY_A, TEMPORAL_API_KEY: KEY_A, AWS_SECRET_ACCESS_KEY: KEY_A, LAB_GATEWAY_KEY: KEY_A };

/**
 * A pass-through proxy in front of the simulator that records the bearer token of every request, and
 * apart those of the requests that do work (all but the free catalog read of a submitter's preflight).
 */
interface KeyProxy extends RecordingProxy {
  /** Every request's bearer token, `(none)` for a request without one. */
  tokens: string[];
  /** The tokens of the requests that carried one. */
  keys: string[];
  working: string[];
}

/** The free reads `run` makes before anything is paid: the catalog and the published prices (docs/costs.md). */
const FREE_READS = new Set(['/v1/models', '/v1/model/info', '/api/pricing']);

/** A keyProxy to `target` for the length of `use`, closed after it whatever happens. */
async function withKeyProxy(target: string, use: (proxy: KeyProxy) => Promise<void>): Promise<void> {
  const proxy = await keyProxy(target);
  try {
    await use(proxy);
  } finally {
    await proxy.close();
  }
}

async function keyProxy(target: string): Promise<KeyProxy> {
  const tokens: string[] = [];
  const keys: string[] = [];
  const working: string[] = [];
  const proxy = await recordingProxy(target, (req) => {
    const token = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '(none)';
    tokens.push(token);
    if (token !== '(none)') keys.push(token);
    if (!(req.method === 'GET' && FREE_READS.has((req.url ?? '').split('?')[0]!))) working.push(token);
  });
  return { ...proxy, tokens, keys, working };
}

function writeKeyJob(dir: string, name: string, baseUrl: string, items: number, keyEnv = 'GATEWAY_API_KEY'): string {
  const text = [
    'version: 1',
    `name: ${name}`,
    'gateway:',
    `  api_key_env: ${keyEnv}`,
    '  base_urls:',
    `    - ${baseUrl}`,
    'defaults:',
    '  model: seedance-1-0-pro-250528',
    '  seconds: "5"',
    'concurrency:\n  max_in_flight: 4',
    'polling:\n  initial: 300ms\n  max: 1s\n  timeout: 5m',
    'output:\n  dir: ./out',
    'items:',
    ...Array.from({ length: items }, (_, i) => `  - prompt: "shot ${i + 1} of ${name}"`),
    '',
  ].join('\n');
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, text);
  return path;
}

const counts = (tokens: string[]) => tokens.reduce<Record<string, number>>((acc, t) => ({ ...acc, [t]: (acc[t] ?? 0) + 1 }), {});

describe('keys: a job spends only its starter’s key, only where allowed', () => {
  let temporal: TestTemporal;
  let sim: SimHandleExt;
  let config: string;
  /** Environment of a user's command: this test's server, an empty user settings folder. */
  const envWith = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
    ...temporal.env,
    GATEWAY_API_KEY: undefined,
    XDG_CONFIG_HOME: config,
    REELFLOW_CONFIG: undefined,
    ...extra,
  });

  before(async () => {
    temporal = await startTestTemporal();
    sim = await startSimulator({ ports: [0], renderMs: [600, 1200], seed: 23, keys: [KEY_A, KEY_B] });
    config = tempDir('reelflow-keys-config-');
  });
  after(async () => {
    await sim?.close();
    await temporal?.stop();
    rmSync(config, { recursive: true, force: true });
  });

  // Each of these runs its job with a worker of its own through a proxy of its own: they run side by
  // side. The fleet cases below share the fleet's queue, so they run one at a time after them.
  describe('runs with workers of their own', { concurrency: true }, () => {
    it('two concurrent runs with keys A and B: each gateway sees only its own key, both finish', async () => {
      const proxyA = await keyProxy(sim.urls[0]!);
      const proxyB = await keyProxy(sim.urls[0]!);
      try {
        const jobA = writeKeyJob(tempDir(), 'keys-a', proxyA.url, 6);
        const jobB = writeKeyJob(tempDir(), 'keys-b', proxyB.url, 6);
        const [a, b] = await Promise.all([
          runCli(['run', jobA], { env: envWith({ GATEWAY_API_KEY: KEY_A }) }),
          runCli(['run', jobB], { env: envWith({ GATEWAY_API_KEY: KEY_B }) }),
        ]);
        assert.equal(a.code, 0, a.stderr + a.stdout);
        assert.equal(b.code, 0, b.stderr + b.stdout);
        assert.match(a.stdout, /keys-a: 6 of 6 succeeded/);
        assert.match(b.stdout, /keys-b: 6 of 6 succeeded/);
        assert.ok(proxyA.tokens.length > 0 && proxyB.tokens.length > 0);
        assert.deepEqual(Object.keys(counts(proxyA.keys)), [KEY_A], `A's gateway saw ${JSON.stringify(counts(proxyA.tokens))}`);
        assert.deepEqual(Object.keys(counts(proxyB.keys)), [KEY_B], `B's gateway saw ${JSON.stringify(counts(proxyB.tokens))}`);
      } finally {
        await proxyA.close();
        await proxyB.close();
      }
    });

    for (const variable of ['OPENAI_API_KEY', 'TEMPORAL_API_KEY', 'AWS_SECRET_ACCESS_KEY']) {
      it(`a job naming ${variable} is refused before any request (exit 2, variable and host named)`, async () => {
        await withKeyProxy(sim.urls[0]!, async (proxy) => {
          const job = writeKeyJob(tempDir(), `keys-${variable.toLowerCase().replace(/_/g, '-')}`, proxy.url, 1, variable);
          const result = await runCli(['run', job], { env: envWith(OTHER_SECRETS) });
          assert.equal(result.code, 2, result.stderr + result.stdout);
          assert.ok(result.stderr.includes(variable), result.stderr);
          assert.ok(result.stderr.includes(new URL(proxy.url).host), result.stderr);
          assert.ok(!result.stderr.includes(KEY_A) && !result.stdout.includes(KEY_A));
          assert.ok(!result.stderr.includes('[REDACTED]'), `the advice reads whole: ${result.stderr}`);
          assert.deepEqual(proxy.tokens, []);
        });
      });
    }

    it('prompt rewrites send nothing with a key the rule refuses: enhance and run --enhance-only exit 2', async () => {
      await withKeyProxy(sim.urls[0]!, async (proxy) => {
        const dir = tempDir();
        const job = writeKeyJob(dir, 'keys-enhance', proxy.url, 2, 'OPENAI_API_KEY');
        writeFileSync(job, `${readFileSync(job, 'utf8')}enhance:\n  model: claude-sonnet-4-6\n`);
        for (const args of [
          ['enhance', job],
          ['run', job, '--enhance-only'],
        ]) {
          const result = await runCli(args, { env: envWith(OTHER_SECRETS) });
          assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}${result.stdout}`);
          assert.ok(result.stderr.includes('OPENAI_API_KEY'), result.stderr);
          assert.ok(!result.stderr.includes(KEY_A) && !result.stdout.includes(KEY_A));
        }
        assert.deepEqual(proxy.tokens, [], 'no request reached the gateway');
      });
    });

    it('doctor probes no gateway with a key the rule refuses (exit 2, key rule named)', async () => {
      await withKeyProxy(sim.urls[0]!, async (proxy) => {
        const job = writeKeyJob(tempDir(), 'keys-doctor', proxy.url, 1, 'OPENAI_API_KEY');
        const result = await runCli(['doctor', job], { env: envWith(OTHER_SECRETS) });
        assert.equal(result.code, 2, result.stdout + result.stderr);
        assert.match(result.stdout, /FAIL\s+key rule: run refuses this job, so no gateway was probed/);
        assert.ok(!result.stdout.includes(KEY_A) && !result.stderr.includes(KEY_A));
        assert.deepEqual(proxy.tokens, []);
      });
    });

    it('TEMPORAL_* and AWS_* stay refused even when allowed on the command line', async () => {
      await withKeyProxy(sim.urls[0]!, async (proxy) => {
        const job = writeKeyJob(tempDir(), 'keys-temporal-allowed', proxy.url, 1, 'TEMPORAL_API_KEY');
        const result = await runCli(['run', job, '--allow-key', `TEMPORAL_API_KEY@${proxy.url}`], { env: envWith(OTHER_SECRETS) });
        assert.equal(result.code, 2, result.stderr + result.stdout);
        assert.match(result.stderr, /TEMPORAL_API_KEY.*never sent/);
        assert.deepEqual(proxy.tokens, []);
      });
    });

    it('another variable goes only where the user allowed it: --allow-key, or the user settings file', async () => {
      await withKeyProxy(sim.urls[0]!, async (proxy) => {
        const dir = tempDir();
        const job = writeKeyJob(dir, 'keys-lab', proxy.url, 1, 'LAB_GATEWAY_KEY');
        const refused = await runCli(['validate', job], { env: envWith(OTHER_SECRETS) });
        assert.equal(refused.code, 0, refused.stderr);
        assert.match(refused.stdout + refused.stderr, /warning: .*LAB_GATEWAY_KEY.*--allow-key/s);
        const allowed = await runCli(['run', job, '--allow-key', `LAB_GATEWAY_KEY@${proxy.url}`], { env: envWith(OTHER_SECRETS) });
        assert.equal(allowed.code, 0, allowed.stderr + allowed.stdout);
        assert.deepEqual(Object.keys(counts(proxy.keys)), [KEY_A]);

        const settings = join(tempDir('reelflow-keys-xdg-'), 'reelflow');
        mkdirSync(settings, { recursive: true });
        writeFileSync(join(settings, 'keys.yaml'), `# docs/keys.md\nLAB_GATEWAY_KEY:\n  - ${proxy.url}\n`);
        // A folder of its own: an output location belongs to one job (docs/reruns.md).
        const job2 = writeKeyJob(tempDir(), 'keys-lab-settings', proxy.url, 1, 'LAB_GATEWAY_KEY');
        const viaFile = await runCli(['run', job2], { env: envWith({ ...OTHER_SECRETS, XDG_CONFIG_HOME: join(settings, '..') }) });
        assert.equal(viaFile.code, 0, viaFile.stderr + viaFile.stdout);
      });
    });
  });

  it("a fleet worker with another key refuses the job's activities; a worker with the same key finishes it", async () => {
    await withKeyProxy(sim.urls[0]!, async (proxy) => {
      const dir = tempDir();
      const wrong = startCli(['worker'], { env: envWith({ GATEWAY_API_KEY: KEY_B }) });
      await wrong.waitFor(/polling task queue/);
      const jobA = writeKeyJob(dir, 'keys-fleet-a', proxy.url, 2);
      const refused = await runCli(['run', jobA, '--no-worker'], { env: envWith({ GATEWAY_API_KEY: KEY_A }) });
      wrong.child.kill('SIGTERM');
      await wrong.done;
      assert.notEqual(refused.code, 0, refused.stdout);
      assert.match(refused.stdout + refused.stderr, /this worker's GATEWAY_API_KEY is not the key the job was started with/);
      // The submitter's own preflight read the catalog with its key A; the worker holding B sent nothing.
      assert.deepEqual(proxy.working, []);
      assert.deepEqual(Object.keys(counts(proxy.keys)), [KEY_A]);

      const right = startCli(['worker'], { env: envWith({ GATEWAY_API_KEY: KEY_A }) });
      await right.waitFor(/polling task queue/);
      const jobA2 = writeKeyJob(tempDir(), 'keys-fleet-a2', proxy.url, 2);
      const finished = await runCli(['run', jobA2, '--no-worker'], { env: envWith({ GATEWAY_API_KEY: KEY_A }) });
      right.child.kill('SIGTERM');
      await right.done;
      assert.equal(finished.code, 0, finished.stderr + finished.stdout);
      assert.deepEqual(Object.keys(counts(proxy.keys)), [KEY_A]);

      // A submitter without the key leaves no fingerprint: the fleet's key carries the job, where its user opted in.
      const fleetB = startCli(['worker', '--accept-keyless-jobs'], { env: envWith({ GATEWAY_API_KEY: KEY_B }) });
      await fleetB.waitFor(/polling task queue/);
      const jobKeyless = writeKeyJob(tempDir(), 'keys-fleet-keyless', proxy.url, 2);
      const keyless = await runCli(['run', jobKeyless, '--no-worker'], { env: envWith({}) });
      fleetB.child.kill('SIGTERM');
      await fleetB.done;
      assert.equal(keyless.code, 0, keyless.stderr + keyless.stdout);
      assert.deepEqual(Object.keys(counts(proxy.working)).sort(), [KEY_A, KEY_B].sort());
    });
  });

  it("a fleet worker applies its own user's key rule: a job allowed only by its submitter is refused, nothing sent", async () => {
    await withKeyProxy(sim.urls[0]!, async (proxy) => {
      const worker = startCli(['worker'], { env: envWith(OTHER_SECRETS) });
      await worker.waitFor(/polling task queue/);
      const job = writeKeyJob(tempDir(), 'keys-fleet-rule', proxy.url, 1, 'LAB_GATEWAY_KEY');
      const submitted = await runCli(['run', job, '--no-worker', '--allow-key', `LAB_GATEWAY_KEY@${proxy.url}`], {
        env: envWith(OTHER_SECRETS),
      });
      worker.child.kill('SIGTERM');
      await worker.done;
      assert.notEqual(submitted.code, 0, submitted.stdout);
      assert.match(submitted.stdout, /this worker refuses the job: the job asks to send \$LAB_GATEWAY_KEY to http:\/\/127\.0\.0\.1:\d+/);
      // Only the submitter's preflight (allowed on its command line) read the catalog; the worker sent nothing.
      assert.deepEqual(proxy.working, []);
    });
  });

  it('run of a running job started with another key does not attach; the starter finishes it with its key alone', async () => {
    await withKeyProxy(sim.urls[0]!, async (proxy) => {
      const job = writeKeyJob(tempDir(), 'keys-attach', proxy.url, 8);
      const first = startCli(['run', job], { env: envWith({ GATEWAY_API_KEY: KEY_A }) });
      await first.waitFor(/keys-attach: started/);
      const second = await runCli(['run', job], { env: envWith({ GATEWAY_API_KEY: KEY_B }) });
      assert.equal(second.code, 2, second.stderr + second.stdout);
      assert.match(second.stderr, /keys-attach is running, started with another GATEWAY_API_KEY than this environment's/);
      const done = await first.done;
      assert.equal(done.code, 0, done.stderr + done.stdout);
      // B's run read the catalog with its own key (its preflight) and did no work on A's job.
      assert.deepEqual(Object.keys(counts(proxy.working)), [KEY_A]);
    });
  });

  it("cancel of a job whose run was killed polls the job's own queue and stops it", async () => {
    await withKeyProxy(sim.urls[0]!, async (proxy) => {
      const job = writeKeyJob(tempDir(), 'keys-cancel', proxy.url, 6);
      const env = envWith({ GATEWAY_API_KEY: KEY_A });
      const run = startCli(['run', job], { env });
      await run.waitFor(/keys-cancel: started/);
      process.kill(-run.child.pid!, 'SIGKILL');
      await run.done;
      const cancel = startCli(['cancel', job], { env });
      const stopped = await within(cancel.done, 150_000, undefined);
      if (!stopped) process.kill(-cancel.child.pid!, 'SIGKILL');
      assert.ok(stopped, 'cancel returned within 150 s (activities the killed worker held end by their timeouts first)');
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.match(stopped.stderr, /reelflow-keys-cancel: stopped \(\d+ canceled, \d+ succeeded\)/);
    });
  });

  it('run of a job on the shared queue follows it without a worker; the fleet finishes it', async () => {
    await withKeyProxy(sim.urls[0]!, async (proxy) => {
      const job = writeKeyJob(tempDir(), 'keys-shared', proxy.url, 4);
      const submitted = startCli(['run', job, '--no-worker'], { env: envWith({ GATEWAY_API_KEY: KEY_A }) });
      await submitted.waitFor(/keys-shared: started/);
      const follower = startCli(['run', job], { env: envWith({ GATEWAY_API_KEY: KEY_A }) });
      await follower.waitFor(/runs on the shared task queue "reelflow"/);
      const fleet = startCli(['worker'], { env: envWith({ GATEWAY_API_KEY: KEY_A }) });
      const [followed, first] = await Promise.all([follower.done, submitted.done]);
      fleet.child.kill('SIGTERM');
      await fleet.done;
      assert.equal(followed.code, 0, followed.stderr + followed.stdout);
      assert.equal(first.code, 0, first.stderr + first.stdout);
      assert.match(followed.stdout, /keys-shared: 4 of 4 succeeded/);
      assert.deepEqual(Object.keys(counts(proxy.keys)), [KEY_A]);
    });
  });

  it("the embedded server's environment holds no gateway key; run --detach's worker finishes the job", async () => {
    const stateDir = tempDir('reelflow-keys-state-');
    const proxy = await keyProxy(sim.urls[0]!);
    let serverPid: number | undefined;
    try {
      const dir = tempDir();
      const job = writeKeyJob(dir, 'keys-detached', proxy.url, 2);
      const env = envWith({ GATEWAY_API_KEY: KEY_A, REELFLOW_STATE_DIR: stateDir, TEMPORAL_ADDRESS: undefined });
      const detached = await runCli(['run', job, '--detach'], { env });
      serverPid = recordedServer(stateDir)?.pid;
      assert.equal(detached.code, 0, detached.stderr);
      assert.ok(serverPid && isAlive(serverPid), 'the embedded server runs');
      const environ = readFileSync(`/proc/${serverPid}/environ`, 'utf8').split('\0');
      assert.ok(environ.length > 0 && environ.some((v) => v.startsWith('PATH=')), 'the server has a PATH');
      assert.ok(!environ.some((v) => v.includes(KEY_A)), 'no variable holds the gateway key');
      assert.ok(!environ.some((v) => v.startsWith('GATEWAY_API_KEY=')));
      // The background worker polls the job's own task queue and finishes it.
      const deadline = Date.now() + 90_000;
      let manifest = '';
      while (Date.now() < deadline && (manifest.match(/"succeeded"/g) ?? []).length < 2) {
        await new Promise((r) => setTimeout(r, 500));
        manifest = (() => {
          try {
            return readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8');
          } catch {
            return '';
          }
        })();
      }
      assert.equal((manifest.match(/"succeeded"/g) ?? []).length, 2, manifest);
    } finally {
      if (serverPid && isAlive(serverPid)) process.kill(serverPid, 'SIGTERM');
      for (let i = 0; i < 50 && serverPid && isAlive(serverPid); i++) await new Promise((r) => setTimeout(r, 100));
      rmSync(stateDir, { recursive: true, force: true });
      await proxy.close();
    }
  });
});
