// The workflow bundle is built once (`npm run build`) so workers start in well under a second.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** Repository root, whether running from source (tsx) or from dist/. */
export const projectRoot = existsSync(resolve(__dirname, '..', 'package.json')) ? resolve(__dirname, '..') : resolve(__dirname, '..', '..');
export const workflowBundlePath = resolve(projectRoot, 'dist', 'workflow-bundle.js');
export const workflowsSourcePath = resolve(projectRoot, 'workflows', 'index.ts');

/** The built bundle; from a checkout without a build, the sources, bundled on the fly (slower start, same behaviour). */
export function workflowSource(): { workflowBundle: { codePath: string } } | { workflowsPath: string } {
  return existsSync(workflowBundlePath) ? { workflowBundle: { codePath: workflowBundlePath } } : { workflowsPath: workflowsSourcePath };
}
