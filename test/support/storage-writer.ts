// A process of its own that writes one generated video to storage, paced like a download, for
// tests that kill it mid-write (test/integration/storage/kill-mid-write.test.ts):
//
//   node --import tsx test/support/storage-writer.ts '<WriterJob as JSON>'
//
// S3 credentials come from the standard AWS environment variables, never from the arguments
// (which any user can read in the process list). Prints `written <sha256>` if it gets to the end.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { OutputSettings } from '../../jobfile/plan';
import { openStorage } from '../../storage/index';
import { videoBytes } from './storage';

export interface WriterJob {
  output: OutputSettings;
  name: string;
  /** videoBytes(seed, 0, bytes) is what gets written. */
  seed: string;
  bytes: number;
  bytesPerSecond: number;
  /** S3 multipart part size; small parts make several land before the kill. */
  partSize?: number;
}

/** Starts the writer; `env` adds to a minimal environment (e.g. AWS credentials). */
export function spawnStorageWriter(job: WriterJob, env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', __filename, JSON.stringify(job)], {
    cwd: resolve(__dirname, '..', '..'),
    env: { PATH: process.env.PATH, HOME: process.env.HOME, AWS_EC2_METADATA_DISABLED: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '') as WriterJob;
  const storage = openStorage(job.output, job.partSize ? { partSize: job.partSize } : undefined);
  const body = videoBytes(job.seed, 0, job.bytes, { bytesPerSecond: job.bytesPerSecond });
  const result = await storage.write(job.name, body, { expectedBytes: job.bytes });
  process.stdout.write(`written ${result.sha256}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`storage-writer: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
