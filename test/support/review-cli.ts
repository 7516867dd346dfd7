// `reelflow review` as the page tests start it: the built CLI, its printed address, Ctrl-C to stop.
import assert from 'node:assert/strict';
import { startCli, type CliRun } from './cli';

/** Starts `reelflow review JOB` and waits until the takes already there are shown (posters made). */
export async function startReview(job: string, env?: NodeJS.ProcessEnv): Promise<{ cli: CliRun; url: string }> {
  const cli = startCli(['review', job], env ? { env } : {});
  let url = '';
  cli.child.stdout!.on('data', (d: Buffer) => {
    const found = /http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\//.exec(d.toString());
    if (found && !url) url = found[0];
  });
  await cli.waitFor(/takes so far/, 120_000);
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(url, 'the address is printed');
  return { cli, url };
}

/** Ctrl-C; the exit code. */
export async function stopReview(cli: CliRun): Promise<number | null> {
  cli.child.kill('SIGINT');
  return (await cli.done).code;
}
