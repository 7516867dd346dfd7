// Which local files a job file may have a worker read (references, items_from, pricing_file). A job
// file is data a user may have been handed: it reaches only into its own folder, so it cannot make a
// worker upload its environment (/proc/self/environ) or a key file as a "reference". Only the user
// widens that, for folders they name (`--allow-read DIR`, or allow_read in their read settings:
// jobfile/read-settings.ts); never the job file itself. Every file read outside the job's folder is
// listed (a warning at where the job names it), so the user sees what an allowance lets through.
import { dirname, isAbsolute, relative } from 'node:path';
import type { Ctx } from './context';
import type { JobFileError } from './plan';
import { readSettingsPath } from './read-settings';

/** Never read, whatever the user allows: the kernel's views of processes and devices. */
const SYSTEM_TREES = ['/proc', '/sys', '/dev'];

/** The system tree `real` is under, if any. */
export function systemTreeOf(real: string): string | undefined {
  return SYSTEM_TREES.find((tree) => real === tree || real.startsWith(`${tree}/`));
}

/** Whether `path` is `root` or below it (both absolute, without links). */
export function isBelow(root: string, path: string): boolean {
  const inside = relative(root, path);
  return !(inside === '..' || inside.startsWith('../') || isAbsolute(inside));
}

/**
 * The folder a file may be read from: the job's folder, else the first allowed folder that holds it
 * (each with its links followed by `realPath`); undefined when none does.
 */
export function readRootOf(
  real: string,
  jobDir: string,
  allowRead: readonly string[],
  realPath: (path: string) => string | undefined,
): string | undefined {
  return [jobDir, ...allowRead].map((folder) => realPath(folder) ?? folder).find((root) => isBelow(root, real));
}

/**
 * Why the job may not read `path`, or undefined when it may. Links are followed first, so a link
 * inside the folder that points outside it counts as outside. A missing file is the caller's to
 * report. `namedByUser`: the user named the file (`--prices`), so it may be anywhere but the system
 * trees. `locate` places the listing of a file read outside the job's folder (else the job file).
 */
export function readScopeProblem(
  ctx: Ctx,
  path: string,
  namedByUser = false,
  locate?: (message: string) => JobFileError,
): string | undefined {
  const real = ctx.fs.realPath(path);
  if (real === undefined) return undefined;
  const system = systemTreeOf(real);
  if (system) return `${path} is under ${system} (${real}): system files are never read`;
  if (!ctx.fs.isFile(real)) return `${path} is not a regular file (a folder, device or pipe)`;
  if (namedByUser) return undefined;
  const jobDir = ctx.fs.realPath(ctx.dir) ?? ctx.dir;
  const root = readRootOf(real, ctx.dir, ctx.allowRead, (p) => ctx.fs.realPath(p));
  if (root === undefined) {
    const folder = dirname(real);
    return (
      `${path} is outside the job file's folder ${jobDir}: move it there, or, if you trust this job with ${folder}, ` +
      `run with --allow-read ${folder} (or list it under allow_read in ${readSettingsPath()}); a job file cannot allow it`
    );
  }
  if (root !== jobDir) listOutsideRead(ctx, real, root, locate);
  return undefined;
}

/** Each file read outside the job's folder once, where it is first named. */
function listOutsideRead(ctx: Ctx, real: string, root: string, locate?: (message: string) => JobFileError): void {
  if (ctx.outsideReads.has(real)) return;
  ctx.outsideReads.add(real);
  const message = `reads ${real}, outside the job file's folder (allowed by you: ${root})`;
  const at = locate?.(message);
  ctx.warnings.push(at ? `${at.file}:${at.line}:${at.column}: warning: ${at.message}` : `${ctx.file}: warning: ${message}`);
}

/**
 * `references:` (`allow_outside`) was once a job-file key: a file that still has it is refused at
 * its line, saying what the user does instead. Returns the job without it, so the schema does not
 * report it a second time as an unknown key.
 */
export function refuseOwnReadScope(raw: unknown, ctx: Ctx): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || !Object.hasOwn(raw, 'references')) return raw;
  const { references, ...rest } = raw as Record<string, unknown>;
  const named = references !== null && typeof references === 'object' && Object.hasOwn(references, 'allow_outside');
  ctx.errors.push(
    ctx.pos.error(
      named ? ['references', 'allow_outside'] : ['references'],
      "a job file cannot widen what it may read (a handed file could name your keys as references): remove it. Move the files into the job file's folder, " +
        `or run with --allow-read DIR for the folder you trust (or list it under allow_read in ${readSettingsPath()}); docs/files.md`,
      'key',
    ),
  );
  return rest;
}
