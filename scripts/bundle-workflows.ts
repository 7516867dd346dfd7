// Builds the workflow bundle once, at build time: workers then start without webpack.
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundlePath, workflowsSourcePath } from '../worker/bundle';

async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath: workflowsSourcePath, logger: undefined });
  mkdirSync(dirname(workflowBundlePath), { recursive: true });
  writeFileSync(workflowBundlePath, code);
  process.stderr.write(`reelflow: workflow bundle written to ${workflowBundlePath} (${Math.round(code.length / 1024)} KiB)\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`reelflow: bundling workflows failed: ${String(error)}\n`);
  process.exit(1);
});
