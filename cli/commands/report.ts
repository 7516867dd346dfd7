// `reelflow report JOB.yaml|JOB-ID`: writes report.html beside the job's outputs (docs/commands.md).
import type { Command } from 'commander';
import type { ReportTarget } from '../../review/report-target';
import { exitCodeFor, NeverRunError } from '../errors';
import { UnsafePathError } from '../../storage/objects/safe-path';
import { writeReport } from '../../review/report';

export interface ReportCommandDeps {
  /** Loads the job (file or id), finds its local output directory and reads its manifest. */
  resolveOutput(target: string): Promise<Pick<ReportTarget, 'job' | 'outputDir' | 'rows'> & Partial<ReportTarget>>;
}

interface ReportOptions {
  json?: boolean;
}

/** File-system failures that mean "the output location is not writable": exit 3 (infrastructure). */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'ENOTDIR', 'ENOENT']);

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]?.trim() || 'unknown error';
}

function looksLikeJobFile(target: string): boolean {
  return /\.ya?ml$/i.test(target);
}

export function registerReportCommand(program: Command, deps: ReportCommandDeps): void {
  program
    .command('report')
    .description('Write report.html beside the outputs: a gallery of the videos with poster frames, prompts, timings and failures.')
    .argument('<job>', 'job file (JOB.yaml) or job id')
    .option('--json', 'print {"path","items","posters"} as one JSON document on stdout')
    .action(async (target: string, options: ReportOptions, command: Command) => {
      let resolved: Awaited<ReturnType<ReportCommandDeps['resolveOutput']>>;
      try {
        resolved = await deps.resolveOutput(target);
      } catch (error) {
        // --json prints JSON even for a job never run (docs/commands.md); the sentence goes to stderr.
        if (error instanceof NeverRunError && options.json) process.stdout.write(`${JSON.stringify(error.toJSON(), null, 2)}\n`);
        const exitCode = exitCodeFor(error);
        if (exitCode === 1) throw error;
        command.error(`reelflow: ${oneLine(error)}`, { exitCode, code: 'reelflow.report' });
      }
      let result: Awaited<ReturnType<typeof writeReport>>;
      try {
        result = await writeReport({
          job: resolved.job,
          rows: resolved.rows,
          outputDir: resolved.outputDir,
          ...(resolved.picks ? { picks: resolved.picks } : {}),
          ...(resolved.earlier ? { earlier: resolved.earlier } : {}),
          ...(resolved.lastReviewAt !== undefined ? { lastReviewAt: resolved.lastReviewAt } : {}),
          ...(resolved.spend ? { spend: resolved.spend } : {}),
          ...(resolved.films?.length ? { films: resolved.films } : {}),
          ...(resolved.chains?.length ? { chains: resolved.chains } : {}),
          ...(looksLikeJobFile(target) ? { jobFile: target } : {}),
        });
      } catch (error) {
        // A planted link under the output directory (docs/files.md): bad input, not a storage outage.
        if (error instanceof UnsafePathError) command.error(`reelflow: ${oneLine(error)}`, { exitCode: 2, code: 'reelflow.report.link' });
        const code = (error as NodeJS.ErrnoException | null)?.code;
        if (code === undefined || !NOT_WRITABLE.has(code)) throw error;
        command.error(`reelflow: cannot write the report in ${resolved.outputDir}: ${oneLine(error)}`, {
          exitCode: 3,
          code: 'reelflow.report.storage',
        });
      }
      if (!result.ffmpeg) process.stderr.write('reelflow: poster frames need ffmpeg; the report shows placeholders\n');
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ path: result.path, items: resolved.rows.length, posters: result.posters })}\n`);
      } else {
        process.stdout.write(`${result.path}\n`);
      }
    });
}
