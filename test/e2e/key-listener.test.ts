// GATEWAY_API_KEY goes unasked only to a loopback listener of the user's own (docs/keys.md). On a
// shared machine any user can listen on a loopback port: here a listener of uid 65534 (nobody), in
// front of the simulator, counts every request that carries a key. Real parts: a Temporal dev
// server, the simulator, the built command, `reelflow worker`.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type SimHandleExt } from '../../sim';
import { runCli, startCli } from '../support/cli';
import { startForeignListener, type ForeignListener } from '../support/foreign-listener';
import { tempDir, writeJob as writeJobIn } from '../support/jobs';

const POLLING = 'polling:\n  initial: 300ms\n  max: 1s\n  timeout: 5m';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

const KEY = 'sk-test-listener-0123456789abcdef';

/** A job of `items` shots on one base address, in a folder of its own. */
function writeJob(name: string, baseUrl: string, items = 1): string {
  return writeJobIn(tempDir(), {
    name,
    baseUrls: [baseUrl],
    polling: POLLING,
    items: Array.from({ length: items }, (_, i) => ({ prompt: `shot ${i + 1} of ${name}` })),
  });
}

describe("the key goes only to the user's own loopback listeners, or where the user named", () => {
  let temporal: TestTemporal;
  let sim: SimHandleExt;
  let foreign: ForeignListener;
  let config: string;
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    ...temporal.env,
    GATEWAY_API_KEY: KEY,
    XDG_CONFIG_HOME: config,
    REELFLOW_CONFIG: undefined,
    ...extra,
  });

  before(async () => {
    temporal = await startTestTemporal();
    sim = await startSimulator({ ports: [0], renderMs: [300, 600], seed: 31, keys: [KEY] });
    foreign = await startForeignListener(sim.urls[0]!);
    config = tempDir('reelflow-listener-config-');
  });
  after(async () => {
    await foreign?.close();
    await sim?.close();
    await temporal?.stop();
  });

  it("run refuses a gateway on another user's loopback port before any request, naming owner and the pair", async () => {
    const job = writeJob('listener-foreign-run', foreign.url);
    const before = foreign.keyed().length;
    const result = await runCli(['run', job], { env: env() });
    await foreign.flush();
    assert.equal(foreign.keyed().length - before, 0, `requests with the key: ${JSON.stringify(foreign.keyed())}`);
    assert.equal(result.code, 2, result.stderr + result.stdout);
    assert.ok(result.stderr.includes(`GATEWAY_API_KEY to ${foreign.url}`), result.stderr);
    assert.match(result.stderr, /uid 65534 \(nobody\)/);
    assert.ok(result.stderr.includes(`--allow-key GATEWAY_API_KEY@${foreign.url}`), result.stderr);
    assert.ok(result.stderr.includes(join(config, 'reelflow', 'keys.yaml')), result.stderr);
    assert.ok(!result.stderr.includes(KEY) && !result.stdout.includes(KEY));
  });

  it("a fleet worker refuses a job whose gateway is another user's loopback port, by its own rule", async () => {
    // The submitter holds the worker's own key (the job carries its fingerprint) and allowed the port
    // for itself: only the worker's own key rule stands between the job and the worker's key.
    const job = writeJob('listener-foreign-fleet', foreign.url, 2);
    const submitted = startCli(['run', job, '--no-worker', '--allow-key', `GATEWAY_API_KEY@${foreign.url}`], { env: env() });
    await submitted.waitFor(/listener-foreign-fleet: started/);
    await foreign.flush();
    const bySubmitter = foreign.keyed().length;
    const worker = startCli(['worker'], { env: env() });
    try {
      const result = await submitted.done;
      await foreign.flush();
      assert.equal(
        foreign.keyed().length - bySubmitter,
        0,
        `the worker sent its key: ${JSON.stringify(foreign.keyed().slice(bySubmitter))}`,
      );
      assert.notEqual(result.code, 0, result.stdout);
      assert.match(result.stdout + result.stderr, /this worker refuses the job: .*GATEWAY_API_KEY.*uid 65534 \(nobody\)/s);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.done;
    }
  });

  it("the user's own listener still works unasked, by address and by the name localhost", async () => {
    for (const [name, base] of [
      ['listener-own-address', sim.urls[0]!],
      ['listener-own-localhost', sim.urls[0]!.replace('127.0.0.1', 'localhost')],
    ] as const) {
      const result = await runCli(['run', writeJob(name, base)], { env: env() });
      assert.equal(result.code, 0, `${base}: ${result.stderr}${result.stdout}`);
      assert.match(result.stdout, new RegExp(`${name}: 1 of 1 succeeded`));
    }
  });

  it('a *.localhost name is not loopback: it needs a pair', async () => {
    const base = `http://gw.localhost:${new URL(sim.urls[0]!).port}`;
    const result = await runCli(['run', writeJob('listener-dot-localhost', base)], { env: env() });
    assert.equal(result.code, 2, result.stderr + result.stdout);
    assert.ok(result.stderr.includes(`--allow-key GATEWAY_API_KEY@${base}`), result.stderr);
  });

  it("an explicit --allow-key pair to another user's port is the user's choice: the job runs", async () => {
    const job = writeJob('listener-foreign-paired', foreign.url);
    const result = await runCli(['run', job, '--allow-key', `GATEWAY_API_KEY@${foreign.url}`], { env: env() });
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.match(result.stdout, /listener-foreign-paired: 1 of 1 succeeded/);
    await foreign.flush();
    assert.ok(
      foreign.keyed().some((r) => r.method === 'POST'),
      'the create went there, with the key',
    );
  });
});
