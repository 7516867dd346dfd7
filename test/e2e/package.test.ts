// The packed package as a user installs it: `npm pack`, `npm install ./reelflow-*.tgz` into an empty
// directory, then the installed command renders a job with the embedded server, and runs as a
// worker of a Temporal service started elsewhere.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type SimHandleExt } from '../../sim';
import { isAlive, type CliResult } from '../support/cli';
import { writeJob } from '../support/jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

const KEY = 'sk-test-package-000000000';
const root = join(__dirname, '..', '..');

/**
 * `reelflow ARGS` as `npx reelflow` runs it in the install directory (node_modules/.bin/reelflow),
 * in its own process group so that stopping it stops everything it started.
 */
function npxReelflow(cwd: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(join(cwd, 'node_modules', '.bin', 'reelflow'), args, {
    cwd,
    env: { ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<CliResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  const waitFor = async (pattern: RegExp, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(stderr) && !pattern.test(stdout)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ${pattern}; stderr:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return { child, done, waitFor };
}

/** The environment of a user who has only the installed package: no checkout's variables. */
function userEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_API_KEY: KEY, ...extra };
  for (const name of ['REELFLOW_TEMPORAL_CLI', 'TEMPORAL_CLI_PATH', 'TEMPORAL_ADDRESS', 'NODE_OPTIONS'])
    if (!(name in extra)) delete env[name];
  return env;
}

describe('the installed package', () => {
  let installDir: string;
  let sim: SimHandleExt;

  before(async () => {
    const packDir = mkdtempSync(join(tmpdir(), 'reelflow-pack-'));
    execFileSync('npm', ['pack', '--pack-destination', packDir, '--loglevel=error'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    const tarball = readdirSync(packDir).find((f) => /^reelflow-.*\.tgz$/.test(f));
    assert.ok(tarball, 'npm pack made a tarball');
    installDir = mkdtempSync(join(tmpdir(), 'reelflow-installed-'));
    execFileSync('npm', ['install', join(packDir, tarball), '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: installDir,
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 300_000,
    });
    sim = await startSimulator({ ports: [0], keys: [KEY], renderMs: [500, 1500] });
  });
  after(async () => {
    await sim?.close();
    if (installDir) rmSync(installDir, { recursive: true, force: true });
  });

  it("holds the built code, the schema and the embedded server's script, and no tests or benchmarks", () => {
    const pkg = join(installDir, 'node_modules', 'reelflow');
    const top = readdirSync(pkg).sort();
    for (const wanted of ['bin', 'dist', 'schema', 'scripts', 'package.json'])
      assert.ok(top.includes(wanted), `${wanted} in ${top.join(', ')}`);
    for (const unwanted of ['test', 'bench', 'node_modules', 'tsconfig.json'])
      assert.ok(!top.includes(unwanted), `${unwanted} must not be packed`);
    assert.ok(readdirSync(join(pkg, 'dist')).includes('workflow-bundle.js'));
    assert.deepEqual(readdirSync(join(pkg, 'scripts')).sort(), ['lib.sh', 'temporal.sh']);
  });

  it('npx reelflow run renders a job against the simulator with the embedded server', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'reelflow-pkg-state-'));
    const job = writeJob(installDir, {
      name: 'packaged',
      baseUrls: sim.urls,
      items: [
        { id: 'a', prompt: 'first' },
        { id: 'b', prompt: 'second' },
      ],
    });
    const run = npxReelflow(installDir, ['run', job], userEnv({ REELFLOW_STATE_DIR: stateDir }));
    const result = await run.done;
    assert.equal(result.code, 0, `${result.stderr}\n${result.stdout}`);
    assert.match(result.stdout + result.stderr, /packaged: 2 of 2 succeeded/);
    const files = readdirSync(join(installDir, 'out')).sort();
    assert.deepEqual(
      files.filter((f) => f.endsWith('.mp4')),
      ['001-a.mp4', '002-b.mp4'],
    );
    assert.equal(
      readFileSync(join(installDir, 'out', 'manifest.jsonl'), 'utf8')
        .trim()
        .split('\n').length,
      2,
    );
    // The command stops the development server it started.
    const server = JSON.parse(readFileSync(join(stateDir, 'temporal', 'server.json'), 'utf8')) as { pid: number };
    assert.ok(server.pid <= 0 || !isAlive(server.pid), 'the embedded server was stopped');
    rmSync(stateDir, { recursive: true, force: true });
  });

  describe('with a Temporal service started elsewhere', () => {
    let temporal: TestTemporal;
    before(async () => {
      temporal = await startTestTemporal();
    });
    after(async () => {
      await temporal?.stop();
    });

    it('npx reelflow worker joins it and does the work of a job started with --no-worker', async () => {
      const env = userEnv({ TEMPORAL_ADDRESS: temporal.address, REELFLOW_STATE_DIR: mkdtempSync(join(tmpdir(), 'reelflow-pkg-w-')) });
      const worker = npxReelflow(installDir, ['worker'], env);
      try {
        await worker.waitFor(/polling task queue "reelflow"/, 60_000);
        // Another job than the one above: an output location of its own (docs/reruns.md).
        const jobDir = join(installDir, 'fleet-job');
        mkdirSync(jobDir, { recursive: true });
        const job = writeJob(jobDir, { name: 'fleet', baseUrls: sim.urls, items: [{ id: 'c', prompt: 'third' }] });
        const run = await npxReelflow(installDir, ['run', job, '--no-worker'], env).done;
        assert.equal(run.code, 0, `${run.stderr}\n${run.stdout}`);
        assert.match(run.stdout + run.stderr, /fleet: 1 of 1 succeeded/);
      } finally {
        process.kill(-worker.child.pid!, 'SIGTERM');
        const stopped = await worker.done;
        assert.equal(stopped.code, 0, stopped.stderr);
      }
    });
  });
});
