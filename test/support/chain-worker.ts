// A worker process for chain tests that kill it (kill -9): the activities of test/support/chain-
// activities.ts, the needs from REELFLOW_TEST_CHAIN (JSON), on TEMPORAL_ADDRESS and REELFLOW_TEST_QUEUE.
// It says `ready` on stdout once it polls.
import { Worker } from '@temporalio/worker';
import { acceptKeylessJobsInThisWorker } from '../../activities/job-key-check';
import { workflowSource } from '../../worker/bundle';
import { connectWorker } from '../../worker/temporal';
import { chainedActivities, type ChainSpec } from './chain-activities';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS!;
  const spec = JSON.parse(process.env.REELFLOW_TEST_CHAIN ?? '{}') as ChainSpec;
  acceptKeylessJobsInThisWorker(true);
  const target = { address, namespace: 'default', connectionOptions: { address }, description: 'test' };
  const worker = await Worker.create({
    connection: await connectWorker(target),
    namespace: 'default',
    taskQueue: process.env.REELFLOW_TEST_QUEUE!,
    ...workflowSource(),
    activities: chainedActivities(() => spec),
  });
  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  process.stdout.write('ready\n');
  await running;
}

void main();
