// A worker's health as a supervisor probes it (docs/deploy.md "Health"): /healthz
// and /readyz beside /metrics on the --metrics listener; /readyz turns unready while the Temporal
// server is stopped and ready again once it is back on the same port; every reelflow_* series is
// there, at zero, before the worker has done anything; the worker runs with its young generation
// and its malloc settings bounded, though started without them (docs/worker-memory.md). The built
// CLI against a real Temporal dev server.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { METRICS } from '../../activities/metrics';
import { WORKER_MALLOC, WORKER_YOUNG_GENERATION } from '../../cli/worker-heap';
import { ensureDevServer, freePort } from '../../worker/dev-server';
import { startCli, withoutWorkerMalloc } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { until } from '../support/wait';

const KEY = 'sk-test-health-0123456789';

async function get(port: number, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, text: await response.text() };
}

describe('worker health endpoints (built CLI, real Temporal)', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: 500 });

  it('/healthz, /readyz and /metrics on the --metrics listener; /readyz follows a Temporal outage', { timeout: 240_000 }, async () => {
    const port = await freePort();
    const worker = startCli(['worker', '--metrics', `127.0.0.1:${port}`], { env: withoutWorkerMalloc(e2e.env) });
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      // The process spawned is the worker, started again in place with its memory bounded
      // (cli/worker-heap.ts): the same pid, the flag on its command line, malloc's settings in its
      // environment.
      const cmdline = (await readFile(`/proc/${worker.child.pid}/cmdline`, 'utf8')).split('\0');
      assert.ok(cmdline.includes(WORKER_YOUNG_GENERATION), cmdline.join(' '));
      const environ = (await readFile(`/proc/${worker.child.pid}/environ`, 'utf8')).split('\0');
      for (const [name, value] of Object.entries(WORKER_MALLOC))
        assert.ok(environ.includes(`${name}=${value}`), `${name}=${value} in its environment`);
      assert.deepEqual(await get(port, '/healthz'), { status: 200, text: 'ok\n' });
      await until(async () => (await get(port, '/readyz')).status === 200, 20_000, '/readyz to say ready');
      assert.match((await get(port, '/readyz')).text, /^ready: polling task queue "reelflow"/);
      assert.equal((await get(port, '/')).status, 404);

      // Before any job: every reelflow_* series is there at zero, beside the SDK's own metrics.
      const metrics = await get(port, '/metrics');
      assert.equal(metrics.status, 200);
      assert.match(metrics.text, /^# TYPE temporal_/m);
      const baseline = '{namespace="default",taskQueue="reelflow"}';
      for (const { name } of Object.values(METRICS)) {
        if (name === METRICS.renderSeconds.name) {
          assert.ok(metrics.text.includes(`\n${name}_count${baseline} 0\n`), `${name}_count at zero:\n${metrics.text}`);
          assert.ok(metrics.text.includes(`\n${name}_bucket{namespace="default",taskQueue="reelflow",le="+Inf"} 0\n`));
        } else {
          assert.ok(metrics.text.includes(`\n${name}${baseline} 0\n`), `${name} at zero:\n${metrics.text}`);
        }
        assert.match(metrics.text, new RegExp(`^# HELP ${name} `, 'm'));
      }

      // Temporal stops: the process lives, but it is not ready.
      const temporalPort = Number(e2e.temporal.address.split(':').pop());
      await e2e.temporal.server.stop();
      await until(async () => (await get(port, '/readyz')).status === 503, 30_000, '/readyz to say unready');
      const unready = await get(port, '/readyz');
      assert.match(unready.text, /^not ready: .*Temporal/);
      assert.deepEqual(await get(port, '/healthz'), { status: 200, text: 'ok\n' });

      // Back on the same port: ready again, without a restart of the worker.
      e2e.temporal.server = await ensureDevServer({
        stateDir: e2e.temporal.stateDir,
        foreground: true,
        port: temporalPort,
        startTimeoutMs: 90_000,
      });
      await until(async () => (await get(port, '/readyz')).status === 200, 60_000, '/readyz to say ready again');
      assert.equal(worker.child.exitCode, null, 'the worker went on through the outage');
    } finally {
      worker.child.kill('SIGTERM');
    }
    const stopped = await worker.done;
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.ok(!stopped.stdout.includes(KEY) && !stopped.stderr.includes(KEY));
  });
});
