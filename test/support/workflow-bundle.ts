// The workflow bundle the workflow unit tests run, built from the sources as they are now and kept
// under test-output/ by the hash of those sources: a dozen test files need the same bundle, and
// webpack spends seconds of CPU on each build (the suite is CPU-bound on two cores). Any change to
// a source file, or to the installed packages, makes a new hash and so a new build.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, type DefaultLogger } from '@temporalio/worker';
import { projectRoot, workflowsSourcePath } from '../../worker/bundle';

/** Not sources of the bundle: tests, build output, packages (the lock file stands for them). */
const SKIPPED_DIRS = new Set(['node_modules', 'test', 'test-output', 'bench', 'docs', 'scripts', '.git']);

/** Every TypeScript file the bundle could import, and the package lock, in a stable order. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) || entry.name.startsWith('dist') ? [] : sourceFiles(path);
      return entry.name.endsWith('.ts') ? [path] : [];
    });
}

function sourcesHash(): string {
  const hash = createHash('sha256');
  for (const file of [...sourceFiles(projectRoot), join(projectRoot, 'package-lock.json')]) {
    hash.update(file.slice(projectRoot.length)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 32);
}

export async function workflowBundleFromSources(logger: DefaultLogger): Promise<{ code: string }> {
  const dir = join(projectRoot, 'test-output', 'workflow-bundles');
  const cached = join(dir, `${sourcesHash()}.js`);
  try {
    return { code: readFileSync(cached, 'utf8') };
  } catch {
    // Not built yet for these sources.
  }
  const { code } = await bundleWorkflowCode({ workflowsPath: workflowsSourcePath, logger });
  mkdirSync(dir, { recursive: true });
  // Written aside and renamed: two files bundling at once never read half a bundle.
  const partial = `${cached}.${process.pid}.part`;
  writeFileSync(partial, code);
  renameSync(partial, cached);
  // Bundles of earlier sources are not read again (a file reading one meanwhile keeps it open).
  for (const name of readdirSync(dir)) if (join(dir, name) !== cached && name.endsWith('.js')) rmSync(join(dir, name), { force: true });
  return { code };
}
