// Builds the workflow bundle once, at build time: workers then start without webpack.
// Usage: tsx scripts/bundle-workflows.ts [OUTPUT]   (default dist/workflow-bundle.js)
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundlePath, workflowsSourcePath } from '../worker/bundle';

async function main(): Promise<void> {
  const out = process.argv[2] ? resolve(process.argv[2]) : workflowBundlePath;
  const { code } = await bundleWorkflowCode({ workflowsPath: workflowsSourcePath, logger: undefined });
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, code);
  process.stderr.write(`reelflow: workflow bundle written to ${out} (${Math.round(code.length / 1024)} KiB)\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`reelflow: bundling workflows failed: ${String(error)}\n`);
  process.exit(1);
});
