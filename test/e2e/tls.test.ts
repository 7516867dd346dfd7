// reelflow against a Temporal cluster as Temporal Cloud or a secured self-hosted cluster presents it:
// TLS with a private CA, API keys the server checks, a namespace other than `default`. The server is
// the real Temporal server (test/support/tls-temporal.ts); the commands are the built CLI
// (bash scripts/build.sh first).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { startSimulator, type SimHandleExt } from '../../sim';
import { jobWorkflowId } from '../../workflows/ids';
import { runCli, startCli, type CliResult } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';
import { startTlsTemporal, type TlsTemporal } from '../support/tls-temporal';

const KEY = 'sk-test-e2e-tls-0123456789';

/** The test process's own Temporal settings must not leak into the commands. */
function baseEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_API_KEY: KEY, REELFLOW_STATE_DIR: tempDir('reelflow-tls-state-') };
  for (const name of Object.keys(env)) if (name.startsWith('TEMPORAL_')) delete env[name];
  return { ...env, ...extra };
}

function output(result: CliResult): string {
  return `exit ${result.code}\nstderr:\n${result.stderr}\nstdout:\n${result.stdout}`;
}

/** Nothing may print, log or store the Temporal API key, and no embedded server may have been started. */
function assertKeyKeptAndNothingStarted(result: CliResult, env: NodeJS.ProcessEnv, apiKey: string): void {
  assert.ok(!result.stdout.includes(apiKey) && !result.stderr.includes(apiKey), 'the API key was printed');
  const logs = join(env.REELFLOW_STATE_DIR!, 'logs');
  for (const file of existsSync(logs) ? readdirSync(logs) : []) {
    assert.ok(!readFileSync(join(logs, file), 'utf8').includes(apiKey), `the API key is in ${file}`);
  }
  assert.ok(!existsSync(join(env.REELFLOW_STATE_DIR!, 'temporal', 'server.json')), 'a development server was started');
}

/** Runs a command that must end on its own; one still running after a minute is killed (and the test fails on its status). */
async function timed(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult & { ms: number }> {
  const started = Date.now();
  const run = startCli(args, { env });
  const hung = setTimeout(() => process.kill(-run.child.pid!, 'SIGKILL'), 60_000);
  const result = await run.done;
  clearTimeout(hung);
  return { ...result, ms: Date.now() - started };
}

describe('a TLS Temporal cluster with API keys, in a namespace other than default', () => {
  let temporal: TlsTemporal;
  let sim: SimHandleExt;

  before(async () => {
    temporal = await startTlsTemporal({ namespace: 'reelflow-tls' });
    sim = await startSimulator({ ports: [0, 0], keys: [KEY], renderMs: [300, 800], seed: 17 });
  });
  after(async () => {
    await sim?.close();
    await temporal?.stop();
  });

  /** The job's workflow, read back from the TLS server in the namespace, with the namespace's key. */
  async function jobStatus(jobName: string): Promise<string> {
    const connection = await Connection.connect({
      address: temporal.address,
      tls: { serverRootCACertificate: readFileSync(temporal.caPath) },
      apiKey: temporal.apiKey,
    });
    try {
      const client = new Client({ connection, namespace: temporal.namespace });
      return (await client.workflow.getHandle(jobWorkflowId(jobName)).describe()).status.name;
    } finally {
      await connection.close();
    }
  }

  function environmentVariables(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return baseEnv({
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: temporal.caPath,
      TEMPORAL_API_KEY: temporal.apiKey,
      ...extra,
    });
  }

  it('run with its embedded worker completes a job, configured by environment variables', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'tls-env',
      baseUrls: sim.urls,
      items: [
        { id: 'one', prompt: 'a' },
        { id: 'two', prompt: 'b' },
      ],
    });
    const env = environmentVariables();
    const result = await runCli(['run', job], { env });
    assert.equal(result.code, 0, output(result));
    assert.match(result.stdout, /tls-env: 2 of 2 succeeded/);
    assert.deepEqual(
      readdirSync(join(dir, 'out'))
        .filter((f) => f.endsWith('.mp4'))
        .sort(),
      ['001-one.mp4', '002-two.mp4'],
    );
    assert.equal(await jobStatus('tls-env'), 'COMPLETED');
    assert.doesNotMatch(result.stderr, /Warning/, 'no runtime warning reaches the user');
    assertKeyKeptAndNothingStarted(result, env, temporal.apiKey);
  });

  it('a worker and run --no-worker complete a job, configured by a temporal.toml profile file alone', async () => {
    const config = join(tempDir('reelflow-tls-config-'), 'temporal.toml');
    writeFileSync(
      config,
      [
        '[profile.default]',
        `address = "${temporal.address}"`,
        `namespace = "${temporal.namespace}"`,
        `api_key = "${temporal.apiKey}"`,
        '[profile.default.tls]',
        `server_ca_cert_path = "${temporal.caPath}"`,
        '',
      ].join('\n'),
    );
    const env = baseEnv({ TEMPORAL_CONFIG_FILE: config });
    const worker = startCli(['worker'], { env });
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      const dir = tempDir();
      const job = writeJob(dir, { name: 'tls-profile', baseUrls: sim.urls, items: [{ id: 'solo', prompt: 'c' }] });
      const result = await runCli(['run', job, '--no-worker'], { env });
      assert.equal(result.code, 0, output(result));
      assert.match(result.stdout, /tls-profile: 1 of 1 succeeded/);
      assert.ok(existsSync(join(dir, 'out', '001-solo.mp4')));
      assert.equal(await jobStatus('tls-profile'), 'COMPLETED');
      assertKeyKeptAndNothingStarted(result, env, temporal.apiKey);
    } finally {
      worker.child.kill('SIGTERM');
    }
    const stopped = await worker.done;
    assert.equal(stopped.code, 0, output(stopped));
    assert.match(
      stopped.stderr,
      new RegExp(`polling task queue "reelflow" on the Temporal service at ${temporal.address.replace(/\./g, '\\.')}`),
    );
    assertKeyKeptAndNothingStarted(stopped, env, temporal.apiKey);
  });

  // The server checks the key: without one, or with one for another namespace, it refuses. That the
  // right key works (above) and these do not is what shows the key reaches the server.
  for (const [what, withKey] of [
    ['no API key', false],
    ['an API key for another namespace', true],
  ] as const) {
    it(`${what}: run, run --no-worker and worker end in seconds with exit 3, saying the server refused`, async () => {
      const key = withKey ? temporal.apiKeyFor(['someone-else:write']) : undefined;
      const job = writeJob(tempDir(), { name: 'tls-refused', baseUrls: sim.urls, items: [{ prompt: 'd' }] });
      for (const args of [['run', job], ['run', job, '--no-worker'], ['worker']]) {
        const env = environmentVariables({ TEMPORAL_API_KEY: key });
        const result = await timed(args, env);
        const said = `${args.join(' ')}: ${output(result)}`;
        assert.equal(result.code, 3, said);
        assert.ok(result.ms < 15_000, `${args[0]} took ${result.ms} ms`);
        assert.match(result.stderr, new RegExp(temporal.address.replace(/\./g, '\\.')), said);
        assert.match(result.stderr, /namespace "reelflow-tls"/, said);
        assert.match(result.stderr, /refused|denied/i, said);
        assert.match(result.stderr, /TEMPORAL_API_KEY/, said);
        if (key) assertKeyKeptAndNothingStarted(result, env, key);
      }
    });
  }

  it('a wrong CA: run, worker and doctor end in seconds with exit 3, naming the address and the certificate problem', async () => {
    const job = writeJob(tempDir(), { name: 'tls-wrong-ca', baseUrls: sim.urls, items: [{ prompt: 'e' }] });
    for (const args of [['run', job], ['worker'], ['doctor', job]]) {
      const env = environmentVariables({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: temporal.wrongCaPath });
      const result = await timed(args, env);
      const said = `${args[0]}: ${output(result)}`;
      assert.equal(result.code, 3, said);
      // Each used to retry a certificate no retry can fix: 13.8 s, 12.6 s, 6.3 s.
      assert.ok(result.ms < 5_000, `${args[0]} took ${result.ms} ms`);
      assert.match(result.stderr + result.stdout, new RegExp(`${temporal.address.replace(/\./g, '\\.')}`), said);
      assert.match(result.stderr + result.stdout, /certificate/i, said);
      assert.match(result.stderr + result.stdout, /not trusted/, said);
      assert.match(result.stderr + result.stdout, /TEMPORAL_TLS_SERVER_CA_CERT_PATH/, said);
      assert.doesNotMatch(result.stderr + result.stdout, /tonic::|Failed to connect before the deadline/, said);
      assertKeyKeptAndNothingStarted(result, env, temporal.apiKey);
    }
  });

  it('a namespace that does not exist, or a server name the certificate does not list: exit 3 at once, saying which', async () => {
    const cases = [
      {
        env: { TEMPORAL_NAMESPACE: 'no-such-namespace', TEMPORAL_API_KEY: temporal.apiKeyFor(['temporal-system:admin']) },
        said: /namespace "no-such-namespace" does not exist on 127\.0\.0\.1:\d+ .*TEMPORAL_NAMESPACE/,
      },
      {
        env: { TEMPORAL_TLS_SERVER_NAME: 'temporal.example' },
        said: /the TLS certificate of 127\.0\.0\.1:\d+ does not name that address: .*temporal\.example.*TEMPORAL_TLS_SERVER_NAME/,
      },
    ];
    for (const { env: extra, said } of cases) {
      for (const args of [['status'], ['worker']]) {
        const result = await timed(args, environmentVariables(extra));
        assert.equal(result.code, 3, `${args[0]}: ${output(result)}`);
        assert.ok(result.ms < 5_000, `${args[0]} took ${result.ms} ms`);
        assert.match(result.stderr, said, `${args[0]}: ${output(result)}`);
      }
    }
  });

  it('TLS not configured for a server that speaks only TLS: exit 3, saying so', async () => {
    const job = writeJob(tempDir(), { name: 'tls-plain', baseUrls: sim.urls, items: [{ prompt: 'f' }] });
    const env = baseEnv({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace });
    const result = await timed(['run', job], env);
    assert.equal(result.code, 3, output(result));
    assert.ok(result.ms < 10_000, `run took ${result.ms} ms`);
    assert.match(result.stderr, /speaks TLS/, output(result));
    assert.match(result.stderr, /TEMPORAL_TLS/, output(result));
  });

  it('TLS configured for a service that does not speak it: exit 3 at once, saying so', async () => {
    // Any plain-text service shows it; the simulator's HTTP port is one at hand.
    const plain = new URL(sim.urls[0]!).host;
    const result = await timed(['status'], environmentVariables({ TEMPORAL_ADDRESS: plain }));
    assert.equal(result.code, 3, output(result));
    assert.ok(result.ms < 5_000, `status took ${result.ms} ms`);
    assert.match(result.stderr, new RegExp(`${plain.replace(/\./g, '\\.')} does not speak TLS .*TEMPORAL_TLS`), output(result));
  });
});
