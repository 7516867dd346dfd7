// What `--metrics HOST:PORT` serves (docs/deploy.md, "Health"): /metrics, /healthz and /readyz.
// The SDK's Prometheus exporter answers /metrics only (404 to anything else) and owns its port, so
// reelflow listens on the address the user gave and runs the exporter on a loopback port of its own
// that only this process reads: /metrics is the exporter's text, with every reelflow_* family
// present from the start (worker/metrics-baseline.ts).
//   /healthz  200 while the process lives and serves.
//   /readyz   200 while this process's worker runs, both its pollers are polling, and the Temporal
//             service answers a health check within READY_CHECK_MS; 503 with the reason otherwise.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Worker } from '@temporalio/worker';
import { freePort } from './dev-server';
import { MetricsAddressError } from './errors';
import { withBaseline } from './metrics-baseline';
import type { MetricsAddress } from './metrics-address';

/** How long /readyz waits for Temporal's answer: a probe's own timeout is typically a few seconds. */
export const READY_CHECK_MS = 2_000;
/** A probe within this long of the last check reuses its answer: scrapers and probes come in bursts. */
const READY_REUSE_MS = 1_000;

interface Readiness {
  ready: boolean;
  reason: string;
}

/** The worker /readyz reports on: the one this process runs (worker, or run's own). */
let watched: Worker | undefined;
let lastCheck: { at: number; answer: Readiness } | undefined;
/** The health check still waiting for Temporal: a slow server gets one at a time, not one per probe. */
let pending: Promise<Readiness> | undefined;

export function watchReadiness(worker: Worker | undefined): void {
  watched = worker;
  lastCheck = undefined;
}

/** Where --metrics serves; its socket does not keep the process alive (the worker does). */
export async function serveWorkerEndpoints(address: MetricsAddress): Promise<void> {
  let exporterPort = 0;
  const server = createServer((request, response) => void answer(request, response, exporterPort));
  await listen(server, address);
  server.unref();
  const { installRuntime } = await import('./runtime.js');
  // Chosen free just before the exporter binds it: another process could take it in between, so try again.
  for (let attempt = 1; ; attempt++) {
    exporterPort = await freePort();
    try {
      installRuntime({
        metrics: {
          bindAddress: `127.0.0.1:${exporterPort}`,
          host: '127.0.0.1',
          port: exporterPort,
          description: `${address.description} (with /healthz and /readyz; the SDK's exporter on 127.0.0.1:${exporterPort}, read only by this process)`,
        },
      });
      return;
    } catch (error) {
      if (!(error instanceof MetricsAddressError) || attempt === 3) {
        server.close();
        throw error;
      }
    }
  }
}

function listen(server: Server, address: MetricsAddress): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(new MetricsAddressError(`cannot serve metrics on ${address.bindAddress}: ${socketProblem(error)}`));
    });
    server.listen({ host: address.host, port: address.port }, () => resolve());
  });
}

/** The system's words for the usual bind failures, as the SDK's exporter reported them before. */
function socketProblem(error: NodeJS.ErrnoException): string {
  const words: Record<string, string> = {
    EADDRINUSE: 'Address already in use',
    EACCES: 'Permission denied',
    EADDRNOTAVAIL: 'Cannot assign requested address',
  };
  return (error.code && words[error.code]) ?? error.message;
}

async function answer(request: IncomingMessage, response: ServerResponse, exporterPort: number): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  const send = (status: number, text: string, type = 'text/plain; charset=utf-8') => {
    response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    response.end(request.method === 'HEAD' ? undefined : text);
  };
  if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'GET only\n');
  try {
    if (path === '/healthz') return send(200, 'ok\n');
    if (path === '/readyz') {
      const { ready, reason } = await readiness();
      return send(ready ? 200 : 503, `${ready ? 'ready' : 'not ready'}: ${reason}\n`);
    }
    if (path === '/metrics') {
      const scraped = await fetch(`http://127.0.0.1:${exporterPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
      if (!scraped.ok) return send(502, `the SDK's metrics exporter answered ${scraped.status}\n`);
      const text = await scraped.text();
      const worker = watched;
      const labels = worker && { namespace: worker.options.namespace, taskQueue: worker.options.taskQueue };
      return send(200, labels ? withBaseline(text, labels) : text, scraped.headers.get('content-type') ?? 'text/plain; version=0.0.4');
    }
    return send(404, 'not found: /metrics, /healthz and /readyz are served here\n');
  } catch (error) {
    return send(503, `${(error as Error).message}\n`);
  }
}

async function readiness(): Promise<Readiness> {
  const worker = watched;
  if (!worker) return { ready: false, reason: 'no worker is running in this process (yet)' };
  const state = worker.getState();
  if (state !== 'RUNNING') return { ready: false, reason: `the worker is ${state.toLowerCase()}` };
  const status = worker.getStatus();
  for (const [kind, poller] of [
    ['workflow', status.workflowPollerState],
    ['activity', status.activityPollerState],
  ] as const) {
    if (poller !== 'POLLING') return { ready: false, reason: `the ${kind} task poller is ${poller.toLowerCase()}` };
  }
  if (lastCheck && Date.now() - lastCheck.at < READY_REUSE_MS) return lastCheck.answer;
  pending ??= temporalAnswers(worker).finally(() => (pending = undefined));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Readiness>((resolve) => {
    timer = setTimeout(
      () => resolve({ ready: false, reason: `the Temporal service did not answer a health check within ${READY_CHECK_MS} ms` }),
      READY_CHECK_MS,
    );
  });
  const checked = await Promise.race([pending, late]).finally(() => clearTimeout(timer));
  lastCheck = { at: Date.now(), answer: checked };
  return checked;
}

/** One gRPC health check over the worker's own connection: the path its polls take. */
async function temporalAnswers(worker: Worker): Promise<Readiness> {
  const connection = worker.connection;
  if (!connection) return { ready: false, reason: 'the worker has no connection to Temporal' };
  const where = `task queue "${worker.options.taskQueue}" in namespace ${worker.options.namespace}`;
  try {
    const reply = await connection.withDeadline(Date.now() + READY_CHECK_MS, () => connection.healthService.check({}));
    // SERVING is 1 in grpc.health.v1.HealthCheckResponse.ServingStatus.
    if (reply.status !== 1) return { ready: false, reason: `the Temporal service says it is not serving (status ${reply.status})` };
    return { ready: true, reason: `polling ${where}` };
  } catch (error) {
    return { ready: false, reason: `cannot reach the Temporal service: ${(error as Error).message.split('\n')[0]}` };
  }
}
