// A command's connection to Temporal: the configured service, or the embedded development server
// (started or reused), plus optionally a worker in this process.
import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { connectClient, connectWorker, resolveTemporal, type TemporalTarget } from '../worker/temporal';
import { createReelflowWorker, runWorkerUntil } from '../worker/worker';
import { TASK_QUEUE } from './task-queue';

export interface Session {
  client: Client;
  target: TemporalTarget;
  worker?: Worker;
  /** Stops the worker (gracefully), closes the client, stops an embedded server this process owns. */
  close(options?: { keepServer?: boolean }): Promise<void>;
}

export async function openSession(options: { worker?: boolean } = {}): Promise<Session> {
  const target = await resolveTemporal();
  let client: Client | undefined;
  try {
    client = await connectClient(target);
    let worker: Worker | undefined;
    let workerDone: Promise<void> | undefined;
    let releaseWorker: () => void = () => {};
    if (options.worker) {
      const connection = await connectWorker(target);
      worker = await createReelflowWorker({ connection, namespace: target.namespace, taskQueue: TASK_QUEUE });
      const stop = new Promise<void>((resolve) => {
        releaseWorker = resolve;
      });
      workerDone = runWorkerUntil(worker, stop).finally(() => connection.close());
    }
    const connected = client;
    return {
      client: connected,
      target,
      worker,
      async close(closeOptions = {}) {
        releaseWorker();
        await workerDone?.catch(() => undefined);
        await connected.connection.close().catch(() => undefined);
        if (!closeOptions.keepServer) await target.embedded?.stop();
      },
    };
  } catch (error) {
    await client?.connection.close().catch(() => undefined);
    await target.embedded?.stop();
    throw error;
  }
}
