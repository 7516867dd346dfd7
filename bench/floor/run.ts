// Runs the floor workflows (./workflows.ts) on a Temporal server with an in-process worker and
// reports items/s and each process's CPU: the ceiling of Temporal itself on this machine.
import type { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { processCpuSeconds } from '../lib/proc';

export interface FloorResult {
  items: number;
  wallMs: number;
  itemsPerSecond: number;
  serverCpuMs: number;
  workerCpuMs: number;
}

/** The SDK logs every bundle and state change at INFO on stderr: keep warnings only. */
function quietSdkLogs(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Installed already (a second floor run in this process): it is quiet already.
  }
}

export async function runFloor(options: {
  address: string;
  client: Client;
  serverPid: number;
  items: number;
  window: number;
  firstCheckMs: number;
}): Promise<FloorResult> {
  const taskQueue = 'reelflow-floor';
  quietSdkLogs();
  const connection = await NativeConnection.connect({ address: options.address });
  try {
    const worker = await Worker.create({
      connection,
      taskQueue,
      workflowsPath: require.resolve('./workflows'),
      activities: {
        async noop() {
          /* the floor: no work at all */
        },
      },
      // The same concurrency settings as reelflow's worker (worker/worker.ts).
      maxConcurrentActivityTaskExecutions: 200,
      maxConcurrentWorkflowTaskExecutions: 40,
      maxCachedWorkflows: 500,
    });
    return await worker.runUntil(async () => {
      const serverBefore = processCpuSeconds(options.serverPid) * 1000;
      const workerBefore = process.cpuUsage();
      const t0 = Date.now();
      await options.client.workflow.execute('FloorJob', {
        taskQueue,
        workflowId: `reelflow-floor-${t0}`,
        args: [options.items, options.window, options.firstCheckMs],
      });
      const wallMs = Date.now() - t0;
      const cpu = process.cpuUsage(workerBefore);
      return {
        items: options.items,
        wallMs,
        itemsPerSecond: options.items / (wallMs / 1000),
        serverCpuMs: processCpuSeconds(options.serverPid) * 1000 - serverBefore,
        workerCpuMs: (cpu.user + cpu.system) / 1000,
      };
    });
  } finally {
    await connection.close();
  }
}
