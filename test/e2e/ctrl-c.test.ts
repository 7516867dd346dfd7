// Ctrl-C pressed in a real terminal (tmux) during `reelflow run`, 20 times at varied moments: while
// the run starts the job, attaches to it, polls its progress, and while its worker runs activities.
// Every press ends the command with exit 130 and the resume hint, never with a stack trace.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { reelflowBin } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';

const run = promisify(execFile);
const KEY = 'sk-test-ctrl-c-000000000000';
const TRIES = 20;
/** Milliseconds between the run's first line (a warning about the job file) and the press, cycled over the tries. */
const DELAYS = [0, 60, 150, 300, 500, 750, 1000, 1300, 1700, 2200];

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function untilAsync<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const readOr = (file: string): string | undefined => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

describe('Ctrl-C during reelflow run in a real terminal (tmux)', () => {
  // Renders that outlast the test: every try finds the job running.
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [600_000, 600_000], seed: 25 });

  it(`exits 130 with the resume hint on each of ${TRIES} presses, never with a stack`, async () => {
    const dir = tempDir();
    const socket = join(dir, 'tmux.sock');
    const tmux = (...args: string[]) => run('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
    // Four jobs: the first try of each starts it, the later ones attach to it (another path).
    const jobs = [0, 1, 2, 3].map((n) =>
      writeJob(tempDir(), {
        name: `ctrl-c-${n}`,
        // A base address ending in /v1 draws a warning, printed as soon as the job file is read: the
        // presses are timed from it, so the early ones land in the preflight and while Temporal connects.
        baseUrls: e2e.sim.urls.map((u) => `${u.replace(/\/+$/, '')}/v1`),
        items: [1, 2, 3].map((i) => ({ id: `k${n}-${i}`, prompt: `ctrl-c ${n} ${i}` })),
      }),
    );
    const env = { ...e2e.env, LANG: 'C.UTF-8', TMUX: undefined, NO_COLOR: undefined };
    await run('tmux', ['-S', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'keep', '-x', '120', '-y', '40', 'sleep 600'], {
      env,
    });
    // A pane whose command died stays on screen, so that what it printed can still be read.
    await tmux('set-option', '-g', 'remain-on-exit', 'on');
    const failures: string[] = [];
    // One lane per job, side by side: each lane's presses stay in order (its first starts the job,
    // the later ones attach), and the tries keep their pairs of job and delay.
    const press = async (t: number): Promise<void> => {
      const job = jobs[t % jobs.length]!;
      const exitFile = join(dir, `exit-${t}`);
      // The run writes to the pane (a terminal: the live display is drawn); the pane stays open after it.
      // `trap : INT`: the shell outlives the press to record the run's status (a trap, unlike an
      // ignored signal, is not inherited: the run gets Ctrl-C as from a user's shell).
      const command = `trap : INT; '${process.execPath}' '${reelflowBin}' run '${job}'; echo $? > '${exitFile}'; exec sleep 600`;
      const window = (await tmux('new-window', '-d', '-P', '-F', '#{window_id}', '-t', 'keep', command)).stdout.trim();
      const screen = async () => (await tmux('capture-pane', '-p', '-J', '-S', '-', '-t', window)).stdout;
      await untilAsync('the run to print its first line', async () => ((await screen()).trim() ? true : undefined));
      await new Promise((r) => setTimeout(r, DELAYS[t % DELAYS.length]));
      await tmux('send-keys', '-t', window, 'C-c');
      const code = await until(`try ${t} to end`, () => readOr(exitFile)?.trim() || undefined, 30_000).catch(
        () => 'none (still running 30 s after the press)',
      );
      const text = (await screen()).trim();
      const hint = text.includes(`interrupted: the job keeps its state and resumes with: reelflow run ${job}`);
      const stack = /\n\s+at \S/.test(text) || /Channel has been shut down|Warning:|Error:/.test(text);
      if (code !== '130' || !hint || stack) {
        failures.push(`try ${t} (${DELAYS[t % DELAYS.length]} ms): exit ${code}, hint ${hint}, stack ${stack}:\n${text}`);
      }
      await tmux('kill-window', '-t', window).catch(() => undefined);
    };
    try {
      await Promise.all(
        jobs.map(async (_, lane) => {
          for (let t = lane; t < TRIES; t += jobs.length) await press(t);
        }),
      );
    } finally {
      await tmux('kill-server').catch(() => undefined);
    }
    assert.deepEqual(failures, [], failures.join('\n----\n'));
  });
});
