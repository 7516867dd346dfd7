// `reelflow review JOB.yaml|JOB-ID` (docs/review.md): serves the review page on loopback, adds
// cards as items finish, and writes the user's picks to picks.jsonl beside the manifest. Runs until
// Ctrl-C, then exits 130 like every interrupted command.
import type { Command } from 'commander';
import { openStorage } from '../../storage';
import { UsageError } from '../errors';
import { findMediaTools } from '../report/posters';
import { planFor } from '../report-target';
import { LiveJob } from '../review/live';
import { startReviewServer } from '../review/server';

/** How often the manifest is read for new rows (only what was appended is read). */
const REFRESH_MS = 1_000;

interface ReviewOptions {
  port?: string;
}

function parsePort(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`--port ${text}: a port number from 0 to 65535 is needed`);
  return port;
}

export function registerReviewCommand(program: Command): void {
  program
    .command('review')
    .description('Serve the review page on 127.0.0.1: posters grouped by item, live as items finish; keep or reject takes (picks.jsonl).')
    .argument('<job>', 'job file (JOB.yaml) or job id')
    .option('--port <port>', 'listen on this port (default: a random free one)')
    .action(async (target: string, options: ReviewOptions) => {
      const port = parsePort(options.port);
      const plan = await planFor(target);
      const storage = openStorage(plan.output);
      const localDir = plan.output.storage === 'local' ? plan.output.dir : undefined;
      const tools = await findMediaTools();
      const live = new LiveJob({ storage, tools, ...(localDir ? { localDir } : {}) });
      await live.start();
      const server = await startReviewServer({
        job: plan.job,
        live,
        ffmpeg: tools.ffmpeg !== undefined,
        ...(localDir ? { localDir } : {}),
        ...(port !== undefined ? { port } : {}),
      });
      process.stdout.write(`${server.url}\n`);
      process.stderr.write(`reelflow: reviewing ${plan.job} (${storage.location}); open the address above. Ctrl-C stops.\n`);
      if (!localDir) process.stderr.write('reelflow: the output is not a local directory: videos are not shown, picks are saved\n');
      if (!tools.ffmpeg) process.stderr.write('reelflow: poster frames need ffmpeg; the page shows placeholders\n');
      let warned = false;
      const timer = setInterval(() => {
        live.refresh().catch((error: unknown) => {
          if (warned) return;
          warned = true;
          process.stderr.write(`reelflow: cannot read the manifest: ${(error as Error).message.split('\n')[0]}\n`);
        });
      }, REFRESH_MS);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      clearInterval(timer);
      await server.close();
      process.exitCode = 130;
    });
}
