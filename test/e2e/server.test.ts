// `reelflow server` as a supervisor runs it, and Temporal's own configuration file choosing the cluster.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { freePort } from '../../worker/dev-server';
import { isAlive, runCli, startCli } from '../support/cli';
import { within } from '../support/wait';

function cleanEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const name of ['TEMPORAL_ADDRESS', 'TEMPORAL_PROFILE', 'TEMPORAL_CONFIG_FILE', 'TEMPORAL_NAMESPACE']) delete env[name];
  return env;
}

describe('reelflow server', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`stays in the foreground until ${signal}, then stops the Temporal server and exits 0`, async () => {
      const stateDir = mkdtempSync(join(tmpdir(), 'reelflow-server-'));
      const [port, uiPort] = [await freePort(), await freePort()];
      const run = startCli(['server', '--ip', '127.0.0.1', '--port', String(port), '--ui-port', String(uiPort)], {
        env: cleanEnv({ REELFLOW_STATE_DIR: stateDir }),
      });
      try {
        await run.waitFor(/Temporal at 127\.0\.0\.1:\d+/, 90_000);
        const record = JSON.parse(readFileSync(join(stateDir, 'temporal', 'server.json'), 'utf8')) as {
          pid: number;
          port: number;
          ip: string;
        };
        assert.equal(record.port, port);
        assert.equal(record.ip, '127.0.0.1');
        // It used to return at once, leaving the server running detached.
        const early = await within(
          run.done.then(() => 'exited'),
          3_000,
          'running',
        );
        assert.equal(early, 'running');
        assert.ok(isAlive(record.pid), 'the Temporal server runs');
        run.child.kill(signal);
        const result = await run.done;
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stderr, new RegExp(`${signal}: stopping Temporal`));
        assert.ok(!isAlive(record.pid), 'the Temporal server was stopped with it');
      } finally {
        if (run.child.exitCode === null) run.child.kill('SIGKILL');
      }
    });
  }
});

describe("Temporal's configuration file", () => {
  it('a default profile in temporal.toml alone selects the cluster: nothing is started', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'reelflow-profile-'));
    const config = mkdtempSync(join(tmpdir(), 'reelflow-xdg-'));
    mkdirSync(join(config, 'temporalio'));
    // A cluster address where nothing listens: the command must try it (exit 3), not start a server.
    writeFileSync(join(config, 'temporalio', 'temporal.toml'), '[profile.default]\naddress = "127.0.0.1:1"\nnamespace = "video"\n');
    const result = await runCli(['status'], { env: cleanEnv({ REELFLOW_STATE_DIR: stateDir, XDG_CONFIG_HOME: config }) });
    assert.equal(result.code, 3, result.stderr);
    assert.match(
      result.stderr,
      /cannot reach the Temporal service at 127\.0\.0\.1:1 \(from TEMPORAL_ADDRESS \/ Temporal's environment configuration or temporal\.toml\)/,
    );
    assert.throws(() => readFileSync(join(stateDir, 'temporal', 'server.json')), 'no development server was started');
  });
});
