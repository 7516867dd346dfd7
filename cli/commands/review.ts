// `reelflow review JOB.yaml|JOB-ID` (docs/review.md): serves the review page on loopback, adds
// cards as items finish, and writes the user's picks to picks.jsonl beside the manifest. Runs until
// Ctrl-C, then exits 130 like every interrupted command.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { estimatePlan } from '../../client/estimate';
import { relativeUrl } from '../../review/report/escape';
import { chainsOf } from '../../review/report/films';
import { openStorage } from '../../storage';
import { UsageError } from '../errors';
import { findMediaTools } from '../../review/report/posters';
import { planFor } from '../../review/report-target';
import { LiveJob } from '../../review/live';
import { startReviewServer } from '../../review/server';
import { recentRewriteCalls } from '../../client/spend';

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
      // An S3 output's posters are made in a private temporary folder, from the videos as this
      // server streams them (ffmpeg reads its own address); the folder goes when review ends.
      const posterDir = localDir ? undefined : await mkdtemp(join(tmpdir(), 'reelflow-review-'));
      let address = '';
      const live = new LiveJob({
        storage,
        tools,
        ...(localDir ? { localDir } : {}),
        ...(posterDir ? { remote: { posterDir, videoUrl: (file: string) => address + (relativeUrl(file) ?? '') } } : {}),
      });
      const server = await startReviewServer({
        job: plan.job,
        live,
        storage,
        estimate: estimatePlan(plan),
        // The rewrites paid for (`reelflow enhance`'s too): read again at most every 30 s, not per page, as status reads them.
        rewriteCalls: () => recentRewriteCalls(plan),
        ffmpeg: tools.ffmpeg !== undefined,
        chains: chainsOf(plan.items),
        ...(localDir ? { localDir } : {}),
        ...(port !== undefined ? { port } : {}),
      });
      address = server.url;
      const stopped = new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      process.stdout.write(`${server.url}\n`);
      process.stderr.write(`reelflow: reviewing ${plan.job} (${storage.location}); open the address above. Ctrl-C stops.\n`);
      if (!tools.ffmpeg) process.stderr.write('reelflow: poster frames need ffmpeg; the page shows placeholders\n');
      // The rows already there are read (and their posters made) with the server up: a page opened
      // meanwhile shows them as they come.
      try {
        await Promise.race([
          live.start().then(() => process.stderr.write(`reelflow: ${live.rows.size} takes so far; new ones appear as they finish\n`)),
          stopped,
        ]);
      } catch (error) {
        await server.close();
        if (posterDir) await rm(posterDir, { recursive: true, force: true });
        throw error;
      }
      let warned = false;
      const timer = setInterval(() => {
        live.refresh().catch((error: unknown) => {
          if (warned) return;
          warned = true;
          process.stderr.write(`reelflow: cannot read the manifest: ${(error as Error).message.split('\n')[0]}\n`);
        });
      }, REFRESH_MS);
      await stopped;
      clearInterval(timer);
      await server.close();
      if (posterDir) await rm(posterDir, { recursive: true, force: true });
      process.exitCode = 130;
    });
}
