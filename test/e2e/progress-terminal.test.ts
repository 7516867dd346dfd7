// The live progress display in a real terminal: `reelflow run` inside a narrow tmux pane, whose
// screen is captured while the job runs, after a resize and after it ends. Long item ids make
// every line longer than the pane, which is where a redraw that counts logical lines leaves stale rows.
// Ids and job names are ASCII (the job file allows nothing else); wide characters are unit-tested.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { reelflowBin, runCli } from '../support/cli';
import { runningStatusSchema } from '../../cli/json-outputs';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';

const run = promisify(execFile);
const KEY = 'sk-test-progress-terminal-00000';
const NAME = 'a-job-name-long-enough-to-push-the-summary-past-forty-columns';
const IDS = ['alpha', 'bravo', 'charlie'].map((w) => `${w}-an-item-id-that-is-far-wider-than-a-forty-column-pane`);
/** The frame's first row: the bar and the job's name when they fit, then the counts (cli/progress.ts). */
const HEADER = /^(\[[#-]{24}\] )?(\S+: )?\d+\/\d+ /;

/** A tmux server of its own (socket in `dir`), one pane running `command`; kill() stops that server only. */
async function startTerminal(dir: string, command: string, size: { columns: number; rows: number }, env: NodeJS.ProcessEnv) {
  const socket = join(dir, 'tmux.sock');
  const tmux = (...args: string[]) => run('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  // -f /dev/null: none of the user's configuration; -u and a UTF-8 locale: wide characters as in a user's terminal.
  await run(
    'tmux',
    ['-S', socket, '-f', '/dev/null', '-u', 'new-session', '-d', '-x', String(size.columns), '-y', String(size.rows), command],
    { env: { ...env, LANG: 'C.UTF-8', TMUX: undefined, NO_COLOR: undefined } },
  );
  return {
    /**
     * The pane's rows, those scrolled into its history first (a resize scrolls some there), trailing
     * blank rows dropped; `joined`: rows that wrapped joined into their lines.
     */
    async screen(joined = false): Promise<string[]> {
      const { stdout } = await tmux('capture-pane', '-p', '-S', '-', ...(joined ? ['-J'] : []));
      const rows = stdout.split('\n').map((r) => r.trimEnd());
      while (rows.length > 0 && rows.at(-1) === '') rows.pop();
      return rows;
    },
    resize: (columns: number) => tmux('resize-window', '-x', String(columns)),
    kill: () => tmux('kill-server').catch(() => undefined),
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A screen holding exactly the run's two opening notes and then one whole frame: the header once,
 * then only item rows, each id at most once, none wider than the pane.
 */
function assertOneFrame(rows: string[], columns: number): void {
  const screen = rows.join('\n');
  const headers = rows.flatMap((r, i) => (HEADER.test(r) ? [i] : []));
  assert.equal(headers.length, 1, `one header row expected:\n${screen}`);
  for (const id of IDS) assert.ok(rows.filter((r) => r.startsWith(`  ${id.slice(0, 10)}`)).length <= 1, `${id} shown twice:\n${screen}`);
  const above = rows.slice(0, headers[0]).join('');
  assert.match(
    above,
    new RegExp(`^${NAME}: started 3 of 3 item\\(s\\) -> \\S+Temporal web UI: \\S+$`),
    `only the notes above the frame:\n${screen}`,
  );
  for (const row of rows.slice(headers[0]! + 1)) assert.match(row, /^ {2}\S/, `only item rows below the header:\n${screen}`);
  for (const row of rows) assert.ok([...row].length <= columns, `row wider than the pane: ${row}`);
}

type Terminal = Awaited<ReturnType<typeof startTerminal>>;

/**
 * assertOneFrame on the screen, checked again for up to 2 s while it fails: a capture may fall
 * between a resize and the redraw it causes. Stale rows stay on screen, so they still fail it.
 */
async function expectOneFrame(term: Terminal, columns: number): Promise<void> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    try {
      return assertOneFrame(await term.screen(), columns);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('reelflow run: the live progress display in a real terminal (tmux)', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [12000, 14000], seed: 14 });

  /** `reelflow run JOB` in a pane of `size` (kept open after it), `look` at it, then the pane's server stopped. */
  async function watchRun(job: string, size: { columns: number; rows: number }, look: (term: Terminal) => Promise<void>) {
    const term = await startTerminal(dirname(job), `'${process.execPath}' '${reelflowBin}' run '${job}'; exec sleep 600`, size, e2e.env);
    try {
      await look(term);
    } finally {
      await term.kill();
    }
  }

  it('redraws in place in a 40-column pane with wrapping lines, after a resize, and leaves no frame behind', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: NAME, baseUrls: e2e.sim.urls, items: IDS.map((id) => ({ id, prompt: `terminal ${id}` })) });
    const exitFile = join(dir, 'exit-code');
    // The pane stays open after the command so its last screen can be read.
    const command = `'${process.execPath}' '${reelflowBin}' run '${job}'; echo $? > '${exitFile}'; exec sleep 600`;
    const term = await startTerminal(dir, command, { columns: 40, rows: 30 }, e2e.env);
    try {
      // Several redraws (every 500 ms) with all three items in flight, each screen checked.
      await until('three items in flight', async () => {
        const rows = await term.screen();
        return IDS.every((id) => rows.some((r) => r.includes(id.slice(0, 10)))) || undefined;
      });
      for (let i = 0; i < 4; i++) {
        await new Promise((r) => setTimeout(r, 600));
        await expectOneFrame(term, 40);
      }

      // A narrower terminal rewraps what is on screen; the display redraws for the new width.
      await term.resize(30);
      await expectOneFrame(term, 30);
      await new Promise((r) => setTimeout(r, 1200));
      await expectOneFrame(term, 30);

      const code = await until('the run to end', async () => {
        try {
          return readFileSync(exitFile, 'utf8').trim();
        } catch {
          return undefined;
        }
      });
      assert.equal(code, '0');
      // The frame is gone: the notes, then the outcome, nothing else.
      const final = await term.screen(true);
      assert.equal(final.length, 3, `notes and outcome only:\n${final.join('\n')}`);
      assert.match(final[0]!, new RegExp(`^${NAME}: started 3 of 3 item\\(s\\) -> `));
      assert.match(final[1]!, /^Temporal web UI: /);
      assert.match(final[2]!, new RegExp(`^${NAME}: 3 of 3 succeeded in `));
    } finally {
      await term.kill();
    }
  });

  it('shows the job, its planned count and its items in flight before the first take has finished', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'shown-at-once',
      baseUrls: e2e.sim.urls,
      items: ['one', 'two', 'three'].map((id) => ({ id, prompt: `shown at once ${id}` })),
    });
    writeFileSync(job, readFileSync(job, 'utf8').replace('defaults:\n', 'defaults:\n  variants: 2\n'));
    const served = e2e.sim.stats().bytesServed;
    await watchRun(job, { columns: 100, rows: 20 }, async (term) => {
      // Renders take 12-14 s: a header with nothing finished yet is what the display shows from its start.
      const header = await until('a header before any take finished', async () => {
        const rows = await term.screen();
        return rows.find((r) => /^\S.*\b0\/6 {1,2}0 ok {1,2}[1-6] in flight/.test(r));
      });
      assert.equal(e2e.sim.stats().bytesServed, served, `shown before the first take was downloaded: ${header}`);
    });
  });

  it('says the job is preparing while its worker reads a 20,000-item plan, before anything is sent', async () => {
    const dir = tempDir();
    // A catalog's worth of rows: the worker's plan takes seconds to read, the time the display once stayed empty.
    const rows = Array.from({ length: 20_000 }, (_, i) => `p${i},A catalog video of product ${i}`);
    writeFileSync(join(dir, 'catalog.csv'), `id,prompt\n${rows.join('\n')}\n`);
    const job = writeJob(dir, { name: 'catalog', baseUrls: e2e.sim.urls, maxInFlight: 2, items: [] });
    writeFileSync(job, readFileSync(job, 'utf8').replace('items:\n', 'items_from:\n  file: catalog.csv\n'));
    const creates = () => Object.values(e2e.sim.stats().createsByPrompt).reduce((a, b) => a + b, 0);
    const sent = creates();
    await watchRun(job, { columns: 100, rows: 20 }, async (term) => {
      // The first frame drawn: the job preparing, with nothing sent yet.
      const first = await until('the first frame', async () => (await term.screen()).find((r) => r.startsWith('[')));
      assert.match(first, /^\[-{24}\] catalog: preparing: reading the job file and its outputs$/);
      assert.equal(creates(), sent, `nothing sent while preparing: ${first}`);
      // Then the counts of the plan it read.
      await until('the plan counted', async () => (await term.screen()).find((r) => /catalog: \d+\/20000 /.test(r)));
    });
  });

  it('at 60 columns the header keeps the counts, the rate and the ETA, and drops decoration first', async () => {
    const dir = tempDir();
    const ids = ['one', 'two', 'three', 'four'];
    const job = writeJob(dir, {
      name: 'sixty-columns',
      baseUrls: e2e.sim.urls,
      maxInFlight: 2,
      items: ids.map((id) => ({ id, prompt: `sixty ${id}` })),
    });
    await watchRun(job, { columns: 60, rows: 12 }, async (term) => {
      // Once an item has finished there is a rate and an ETA; both must be on the header row.
      const header = await until('a header after the first item finished', async () => {
        const rows = await term.screen();
        return rows.find((r) => /\b[1-4]\/4\b/.test(r) && /[1-4] ok/.test(r) && !r.startsWith('  '));
      });
      assert.ok([...header].length <= 59, `header wider than 59 columns: ${header}`);
      assert.match(
        header,
        /\b[1-4]\/4 {1,2}[1-4] ok {1,2}[0-9]+ (in flight|flying) {1,2}[0-9.]+\/s {1,2}ETA \S+/,
        `counts, rate and ETA: ${header}`,
      );
      assert.doesNotMatch(header, /…/, `nothing cut: ${header}`);
    });
  });
  it('a chain: which shot waits on which and which are blocked and why, each one bounded line', async () => {
    const dir = tempDir();
    const chained = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) =>
        [
          `  - id: ${prefix}-${i + 1}`,
          `    prompt: "graph ${prefix} ${i + 1}"`,
          ...(i > 0 ? ['    references:', `      - image: { last_frame_of: ${prefix}-${i} }`] : []),
        ].join('\n'),
      );
    const job = join(dir, 'graph.yaml');
    writeFileSync(
      job,
      [
        'version: 1',
        'name: graph',
        'gateway:',
        '  base_urls:',
        ...e2e.sim.urls.map((u) => `    - ${u}`),
        'defaults:',
        '  model: doubao-seedance-2-0-260128',
        '  seconds: "5"',
        'polling:\n  initial: 200ms\n  max: 500ms\n  timeout: 5m',
        'output:\n  dir: ./out',
        'items:',
        ...chained('a', 2),
        ...chained('b', 9),
        '',
      ].join('\n'),
    );
    e2e.sim.setFaults({ failPrompts: ['graph a 1'] });
    try {
      await watchRun(job, { columns: 60, rows: 20 }, async (term) => {
        // While b-2 renders: a-2 is blocked by the failed a-1, b-3..b-9 wait, each on the shot before.
        const rows = await until('the blocked and waiting lines', async () => {
          const screen = await term.screen();
          const both = screen.some((r) => r.startsWith('  blocked: ')) && screen.some((r) => r.startsWith('  waiting: '));
          return both ? screen : undefined;
        });
        const blocked = rows.find((r) => r.startsWith('  blocked: '))!;
        assert.match(blocked, /^ {2}blocked: a-2 \(a-1 ended failed\)$/, rows.join('\n'));
        const waiting = rows.find((r) => r.startsWith('  waiting: '))!;
        assert.match(waiting, /^ {2}waiting: b-\d \(on b-\d\)(, b-\d \(on b-\d\))*, … and \d more$/, rows.join('\n'));
        // The frame (the notes above it may wrap): header, the chain's lines, the items in flight.
        const frame = rows.slice(rows.findIndex((r) => HEADER.test(r)));
        for (const row of frame) assert.ok([...row].length <= 59, `row wider than the pane: ${row}\n${rows.join('\n')}`);
        assert.ok(frame.length <= 20, rows.join('\n'));

        // `status` says the same, text and --json, while the chain runs.
        const json = await runCli(['status', job, '--json'], { env: e2e.env });
        const status = runningStatusSchema.parse(JSON.parse(json.stdout));
        assert.deepEqual(status.blocked, [{ key: 'a-2', blocked_by: 'a-1', why: 'a-1 ended failed' }]);
        assert.ok(
          status.waiting?.some((w) => w.key === 'b-9' && w.waits_on === 'b-8'),
          json.stdout,
        );
        const text = await runCli(['status', job], { env: e2e.env });
        const said = text.stdout + text.stderr;
        assert.match(said, /^ {2}blocked a-2: a-1 ended failed$/m);
        assert.match(said, /^ {2}waiting b-\d: on b-\d$/m);
        assert.match(said, /^ {2}… and \d more waiting$/m);
        assert.doesNotMatch(said, /blocked #/, 'a blocked item is not told among the failures');
      });
    } finally {
      e2e.sim.setFaults({ failPrompts: [] });
    }
  });
});
