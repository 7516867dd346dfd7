// The worker image of deploy/Containerfile, built with podman from `npm pack` and started as a fleet
// worker: it runs as a non-root user, holds no Temporal CLI and no development dependencies, renders
// a job submitted from outside with --no-worker, and stops cleanly on SIGTERM (docs/deploy.md).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type SimHandleExt } from '../../sim';
import { runCli } from '../support/cli';
import { writeJob } from '../support/jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

const KEY = 'sk-test-container-0000000';
const root = join(__dirname, '..', '..');
const IMAGE = `localhost/reelflow-worker:test-${process.pid}`;
const NAME = `reelflow-worker-test-${process.pid}`;
/**
 * How these machines run a container: crun refuses their hybrid cgroup layout, and the sandbox may
 * not set resource limits above the defaults, so runc with modest limits. Loopback only: the host's
 * network, where the test's Temporal and simulator listen on 127.0.0.1.
 */
const RUN_FLAGS = ['--runtime', 'runc', '--network', 'host', '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];

function podman(args: string[], timeout = 120_000): string {
  return execFileSync('podman', args, { encoding: 'utf8', timeout, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A command inside the image, as its own user, instead of the worker. */
function inImage(script: string): string {
  return podman(['run', '--rm', ...RUN_FLAGS, '--entrypoint', 'sh', IMAGE, '-c', script]);
}

describe('the worker image (deploy/Containerfile)', () => {
  let context: string;
  let temporal: TestTemporal;
  let sim: SimHandleExt;

  before(async () => {
    const baseImage = execFileSync('bash', [join(root, 'deploy', 'base-image.sh'), '--print-path'], {
      encoding: 'utf8',
      timeout: 1_200_000,
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
    context = mkdtempSync(join(tmpdir(), 'reelflow-image-'));
    execFileSync('npm', ['pack', '--pack-destination', context, '--loglevel=error'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    const tarball = readdirSync(context).find((f) => /^reelflow-.*\.tgz$/.test(f));
    assert.ok(tarball, 'npm pack made a tarball');
    renameSync(join(context, tarball), join(context, 'reelflow.tgz'));
    copyFileSync(join(root, 'package-lock.json'), join(context, 'package-lock.json'));
    // This machine reaches the npm registry through a TLS-intercepting proxy: its CA is the build secret.
    const ca = process.env.NODE_EXTRA_CA_CERTS;
    const secret = ca && existsSync(ca) ? ['--secret', `id=npm-ca,src=${ca}`] : [];
    // chroot isolation: a build step needs no OCI runtime (see RUN_FLAGS for why crun cannot run here).
    execFileSync(
      'podman',
      [
        'build',
        '--isolation',
        'chroot',
        '--network',
        'host',
        ...secret,
        '--build-arg',
        `NODE_IMAGE=${baseImage}`,
        '-f',
        join(root, 'deploy', 'Containerfile'),
        '-t',
        IMAGE,
        context,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'], timeout: 900_000 },
    );
    temporal = await startTestTemporal();
    sim = await startSimulator({ ports: [0], keys: [KEY], renderMs: [300, 800] });
  });
  after(async () => {
    await sim?.close();
    await temporal?.stop();
    try {
      podman(['rm', '--force', '--ignore', NAME]);
      podman(['rmi', '--force', IMAGE]);
    } catch {
      // nothing was built
    }
    if (context) rmSync(context, { recursive: true, force: true });
  });

  it('runs as a non-root user with the built package, its production dependencies and no Temporal CLI', () => {
    const out = inImage(
      [
        'id -u',
        'node --version',
        'command -v temporal || echo no-temporal-on-path',
        'find / -xdev -name temporal -type f 2>/dev/null | head -1; echo end-of-find',
        'test -f /opt/reelflow/dist/workflow-bundle.js && echo bundle',
        'test -d /opt/reelflow/node_modules/@temporalio/worker && echo production-deps',
        'test -d /opt/reelflow/node_modules/typescript || echo no-dev-deps',
        'reelflow --version',
      ].join('; '),
    ).split('\n');
    assert.notEqual(out[0], '0', 'not root');
    assert.equal(out[0], '10001');
    assert.match(out[1] ?? '', /^v(22|24)\./);
    assert.equal(out[2], 'no-temporal-on-path');
    assert.equal(out[3], 'end-of-find', 'no temporal binary anywhere in the image');
    assert.deepEqual(out.slice(4, 8), ['bundle', 'production-deps', 'no-dev-deps', '0.1.0']);
  });

  it('works a job submitted from outside with --no-worker, then stops on SIGTERM with exit 0', async () => {
    const jobDir = mkdtempSync(join(tmpdir(), 'reelflow-image-job-'));
    // The worker writes the videos as its own user (uid 10001), into the same path mounted into the
    // container; the submitting command (root here) makes out/ too, so it exists writable first.
    chmodSync(jobDir, 0o755);
    mkdirSync(join(jobDir, 'out'));
    chmodSync(join(jobDir, 'out'), 0o777);
    const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_API_KEY: KEY, TEMPORAL_ADDRESS: temporal.address };
    // The key reaches the container from the environment (`--env NAME` copies it), never on a command line.
    const worker = spawn(
      'podman',
      [
        'run',
        '--rm',
        '--name',
        NAME,
        ...RUN_FLAGS,
        '--env',
        'GATEWAY_API_KEY',
        '--env',
        `TEMPORAL_ADDRESS=${temporal.address}`,
        '--volume',
        `${jobDir}:${jobDir}`,
        IMAGE,
        // The simulator listens on the host's loopback as root, and the worker runs as uid 10001: a
        // loopback port of another user gets the key only through its operator's pair (docs/keys.md).
        ...sim.urls.flatMap((url) => ['--allow-key', `GATEWAY_API_KEY@${url}`]),
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    worker.stdout.on('data', (d: Buffer) => (output += d.toString()));
    worker.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => worker.on('close', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 120_000;
      while (!/polling task queue/.test(output)) {
        assert.ok(Date.now() < deadline && worker.exitCode === null, `the containerised worker never polled:\n${output}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const job = writeJob(jobDir, {
        name: 'containerised',
        baseUrls: sim.urls,
        items: [
          { id: 'a', prompt: 'first' },
          { id: 'b', prompt: 'second' },
        ],
      });
      const run = await runCli(['run', job, '--no-worker'], { env, cwd: jobDir });
      assert.equal(run.code, 0, `${run.stderr}\n${run.stdout}\nworker:\n${output}`);
      assert.match(run.stdout + run.stderr, /containerised: 2 of 2 succeeded/);
      assert.deepEqual(
        readdirSync(join(jobDir, 'out'))
          .filter((f) => f.endsWith('.mp4'))
          .sort(),
        ['001-a.mp4', '002-b.mp4'],
      );
      podman(['stop', '--time', '30', NAME]);
      assert.equal(await exited, 0, `the worker's exit after SIGTERM:\n${output}`);
      assert.match(output, /reelflow worker: stopped/);
      assert.ok(!output.includes(KEY), 'the key never appears in the worker output');
    } finally {
      if (worker.exitCode === null) podman(['rm', '--force', '--ignore', NAME]);
      rmSync(jobDir, { recursive: true, force: true });
    }
  });
});
