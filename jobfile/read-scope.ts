// Which local files a job file may have a worker read (references, items_from). A job file is
// data a user may have been handed: by default it reaches only into its own folder, so it cannot
// make a worker upload its environment (/proc/self/environ) or a key file as a "reference".
import { isAbsolute, relative } from 'node:path';
import type { Ctx } from './context';

/** Never read, whatever the job file allows: the kernel's views of processes and devices. */
const SYSTEM_TREES = ['/proc', '/sys', '/dev'];

/**
 * Why the job may not read `path`, or undefined when it may. Links are followed first, so a link
 * inside the folder that points outside it counts as outside. A missing file is the caller's to report.
 */
export function readScopeProblem(ctx: Ctx, path: string, allowOutside: boolean): string | undefined {
  const real = ctx.fs.realPath(path);
  if (real === undefined) return undefined;
  const system = SYSTEM_TREES.find((tree) => real === tree || real.startsWith(`${tree}/`));
  if (system) return `${path} is under ${system} (${real}): system files are never read`;
  if (!ctx.fs.isFile(real)) return `${path} is not a regular file (a folder, device or pipe)`;
  if (allowOutside) return undefined;
  const root = ctx.fs.realPath(ctx.dir) ?? ctx.dir;
  const inside = relative(root, real);
  if (inside === '..' || inside.startsWith('../') || isAbsolute(inside)) {
    return `${path} is outside the job file's folder ${root}: move it there, or set references.allow_outside: true`;
  }
  return undefined;
}
