// `reelflow status JOB --watch` in a real terminal (tmux): one frame redrawn in place, as run shows
// it, whose ETA counts down between item ends; the frame is gone when the job ends and its outcome
// is printed. The job runs on a worker of its own (`reelflow worker`), as in a fleet.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { reelflowBin, runCli, startCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';
import { until } from '../support/wait';

const exec = promisify(execFile);
const KEY = 'sk-test-status-watch-000000000';
const NAME = 'watched';
const HEADER = /^\[[#-]{24}\] watched: /;

describe('status --watch in a real terminal (tmux)', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [4000, 5000], seed: 31 });

  it('redraws one frame in place, the ETA moves, and the outcome replaces the frame', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: NAME,
      baseUrls: e2e.sim.urls,
      maxInFlight: 1,
      items: [1, 2, 3, 4].map((i) => ({ id: `w${i}`, prompt: `watched ${i}` })),
    });
    const worker = startCli(['worker'], { env: e2e.env });
    const socket = join(dir, 'tmux.sock');
    const tmux = (...args: string[]) => exec('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
    try {
      await worker.waitFor(/polling task queue/, 60_000);
      const started = await runCli(['run', job, '--detach', '--no-worker'], { env: e2e.env });
      assert.equal(started.code, 0, started.stderr);
      const exitFile = join(dir, 'exit-code');
      const command = `'${process.execPath}' '${reelflowBin}' status '${job}' --watch; echo $? > '${exitFile}'; exec sleep 600`;
      await exec('tmux', ['-S', socket, '-f', '/dev/null', '-u', 'new-session', '-d', '-x', '100', '-y', '30', command], {
        env: { ...e2e.env, LANG: 'C.UTF-8', TMUX: undefined, NO_COLOR: undefined },
      });
      // The visible screen: the frame starts at the pane's top-left corner, where erasing below the
      // cursor clears the whole screen, and tmux (scroll-on-clear) keeps a cleared screen in its
      // history; terminals do not, and below a shell prompt there is nothing to clear.
      const screen = async () =>
        (await tmux('capture-pane', '-p')).stdout
          .split('\n')
          .map((r) => r.trimEnd())
          .filter((r) => r !== '');
      const headers = (rows: string[]) => rows.filter((r) => HEADER.test(r));
      const eta = (rows: string[]) => /ETA (\S+)/.exec(headers(rows)[0] ?? '')?.[1];

      let first: string[] = [];
      await until(
        async () => {
          first = await screen();
          return eta(first) !== undefined;
        },
        60_000,
        'a frame with an ETA',
      ).catch(async (error: Error) => {
        const size = await tmux('display', '-p', '#{pane_width}x#{pane_height}').then((r) => r.stdout.trim());
        throw new Error(`${error.message}; the screen (${size}):\n${first.join('\n')}`);
      });
      await new Promise((r) => setTimeout(r, 2_500));
      const later = await screen();
      for (const rows of [first, later]) assert.equal(headers(rows).length, 1, `one frame, redrawn in place:\n${rows.join('\n')}`);
      assert.notEqual(eta(later), eta(first), `the ETA moves:\n${first.join('\n')}\n---\n${later.join('\n')}`);

      await until(
        async () => {
          try {
            return readFileSync(exitFile, 'utf8').trim() !== '';
          } catch {
            return false;
          }
        },
        90_000,
        'status --watch to end',
      );
      assert.equal(readFileSync(exitFile, 'utf8').trim(), '0');
      const final = await screen();
      assert.equal(headers(final).length, 0, `the frame is gone:\n${final.join('\n')}`);
      assert.match(final.join('\n'), /watched: 4 of 4 succeeded/);
    } finally {
      await tmux('kill-server').catch(() => undefined);
      worker.child.kill('SIGTERM');
      await worker.done;
    }
  });
});
