import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { ProgressView, layoutFrame, rowsTaken, type ProgressOutput } from '../../../cli/progress';
import { displayWidth } from '../../../client/terminal-text';
import type { JobProgress, RenderStatus } from '../../../workflows/types';

const GREEN = (text: string) => `\u001b[32m${text}\u001b[0m`;

describe('rowsTaken', () => {
  it('is one row for a line up to the width, more as it wraps', () => {
    assert.equal(rowsTaken('', 40), 1);
    assert.equal(rowsTaken('x'.repeat(40), 40), 1);
    assert.equal(rowsTaken('x'.repeat(41), 40), 2);
    assert.equal(rowsTaken('x'.repeat(81), 40), 3);
  });
  it('moves a wide character that does not fit at the end of a row to the next one', () => {
    assert.equal(rowsTaken(`a${'视'.repeat(19)}`, 40), 1);
    assert.equal(rowsTaken(`a${'视'.repeat(20)}`, 40), 2, 'the 20th character would take columns 40 and 41');
    assert.equal(rowsTaken('视'.repeat(20), 40), 1);
  });
  it('ignores escape sequences', () => {
    assert.equal(rowsTaken(GREEN('x'.repeat(40)), 40), 1);
  });
});

describe('layoutFrame', () => {
  const items = ['  one', '  two', '  three', '  four'];
  it('shows every item on a tall terminal, each line fitting one row with the last column free', () => {
    const lines = layoutFrame(`header ${'视'.repeat(30)}`, items, 0, { columns: 20, rows: 24 });
    assert.deepEqual(lines.slice(1), items);
    assert.equal(lines[0], `header ${'视'.repeat(5)}…`);
    for (const line of lines) assert.ok(displayWidth(line) <= 19);
  });
  it('cuts a coloured line without splitting a colour code, and closes the colour', () => {
    const [line] = layoutFrame(`ab${GREEN('cdefgh')}`, [], 0, { columns: 6, rows: 24 });
    assert.equal(line, 'ab\u001b[32mcd…\u001b[0m');
  });
  it('fits any mix of wide, coloured and combining text into the width', () => {
    const pieces = ['a', '视', '🎬', GREEN('ok'), 'e\u0301', ' '];
    for (let seed = 1; seed <= 200; seed++) {
      let text = '';
      for (let i = 0, s = seed; i < 30; i++, s = (s * 48271) % 2147483647) text += pieces[s % pieces.length];
      for (const columns of [2, 3, 10, 29]) {
        const [line] = layoutFrame(text, [], 0, { columns, rows: 24 });
        assert.ok(displayWidth(line!) <= columns - 1, `${text} at ${columns}`);
        assert.equal(rowsTaken(line!, columns), 1);
      }
    }
  });
  it('shows what fits the height and counts the rest as more in flight', () => {
    const lines = layoutFrame('header', items, 5, { columns: 80, rows: 5 });
    assert.equal(lines.length, 4, 'header, two items, the more line; the cursor rests on the fifth row');
    assert.deepEqual(lines.slice(0, 3), ['header', '  one', '  two']);
    assert.match(lines[3]!, /… and 7 more in flight/);
  });
});

/** A terminal stand-in that records what is written; `resize` changes its size as a window would. */
function fakeTerminal(columns: number, rows: number) {
  const events = new EventEmitter();
  const terminal = {
    columns,
    rows,
    written: '',
    write(text: string) {
      terminal.written += text;
      return true;
    },
    on(event: string, listener: () => void) {
      events.on(event, listener);
      return terminal;
    },
    off(event: string, listener: () => void) {
      events.off(event, listener);
      return terminal;
    },
    resize(newColumns: number) {
      terminal.columns = newColumns;
      events.emit('resize');
    },
    listeners: () => events.listenerCount('resize'),
  };
  return terminal;
}

const LONG_KEY = 'an-item-key-much-longer-than-the-terminal-is-wide';

function progressOf(inFlight: number): JobProgress {
  return {
    job: 'narrow',
    state: 'running',
    total: 3,
    started: inFlight,
    startedAt: 0,
    runs: 1,
    recentFailures: [],
    counts: { succeeded: 0, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0, pending: 3 - inFlight, in_flight: inFlight },
    inFlight: Array.from({ length: inFlight }, (_, i) => ({
      workflowId: `narrow/${i}`,
      key: `${LONG_KEY}-${i}`,
      index: i + 1,
      model: 'm',
    })),
  };
}

/** A client whose items answer `itemStatus` at once, or when `release` is called. */
function clientAnswering(gate?: Promise<void>): Client {
  const status = (id: string): RenderStatus => ({
    key: `${LONG_KEY}-${id.slice(-1)}`,
    phase: 'rendering',
    polls: 2,
    baseUrl: 'http://127.0.0.1:9',
  });
  return {
    withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn(),
    workflow: {
      getHandle: (id: string) => ({
        query: async () => {
          await gate;
          return status(id);
        },
      }),
    },
  } as unknown as Client;
}

// eslint-disable-next-line no-control-regex -- the cursor-up-and-erase sequence starts with ESC
const ERASE = /^\r\u001b\[(\d+)A\u001b\[0J/;

describe('ProgressView on a terminal', () => {
  it('erases exactly the rows its last frame takes, re-measured at the width after a resize, and redraws for the new width', async () => {
    const terminal = fakeTerminal(40, 24);
    const view = new ProgressView(clientAnswering(), true, 5_000, terminal as unknown as ProgressOutput);
    await view.render(progressOf(3));
    const first = terminal.written.split('\n').slice(0, -1);
    assert.equal(first.length, 4, 'header and three items');
    for (const line of first) assert.ok(displayWidth(line) <= 39, `fits 40 columns: ${line}`);

    terminal.written = '';
    await view.render(progressOf(2));
    assert.equal(ERASE.exec(terminal.written)?.[1], '4', 'one row per line');

    // 39-column lines rewrap into two rows each at 30 columns: all of them are erased (the header,
    // its counts only at this width, still fits one row).
    terminal.written = '';
    terminal.resize(30);
    assert.equal(ERASE.exec(terminal.written)?.[1], '5', 'the header, and two lines of two rows');
    const redrawn = terminal.written.replace(ERASE, '').split('\n').slice(0, -1);
    assert.equal(redrawn.length, 3);
    for (const line of redrawn) assert.ok(displayWidth(line) <= 29, `fits 30 columns: ${line}`);

    terminal.written = '';
    view.clear();
    assert.equal(ERASE.exec(terminal.written)?.[1], '3');
    assert.equal(terminal.listeners(), 0, 'no redraw once cleared');
  });

  it('asks the terminal its size when it draws: a frame drawn before the resize event is laid out and erased at the new width', async () => {
    // A loaded machine: the window is already 30 columns wide, but `columns` still says 40 until
    // the SIGWINCH is handled. The frame drawn meanwhile must fit 30 columns, or its rows wrap and
    // the next erasure (counted at 40) leaves them on screen.
    const terminal = Object.assign(fakeTerminal(40, 24), { windowSize: [40, 24] as [number, number] });
    const stand = Object.assign(terminal, { getWindowSize: () => terminal.windowSize });
    const view = new ProgressView(clientAnswering(), true, 5_000, stand as unknown as ProgressOutput);
    await view.render(progressOf(3));
    terminal.windowSize = [30, 24];
    terminal.written = '';
    await view.render(progressOf(3));
    assert.equal(ERASE.exec(terminal.written)?.[1], '7', 'the header, and three 39-column lines of two rows each at 30 columns');
    const lines = terminal.written.replace(ERASE, '').split('\n').slice(0, -1);
    for (const line of lines) assert.ok(displayWidth(line) <= 29, `fits 30 columns: ${line}`);
  });

  it('prints item keys and addresses without the control sequences they carry', async () => {
    const terminal = fakeTerminal(80, 24);
    const status: RenderStatus = { key: 'clip\u001b[2J-1', phase: 'rendering', polls: 1, baseUrl: 'http://gw\u001b]0;owned\u0007.example' };
    const client = {
      withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn(),
      workflow: { getHandle: () => ({ query: async () => status }) },
    } as unknown as Client;
    await new ProgressView(client, true, 5_000, terminal as unknown as ProgressOutput).render(progressOf(1));
    assert.ok(!terminal.written.includes('\u001b[2J') && !terminal.written.includes('\u001b]'), JSON.stringify(terminal.written));
    assert.match(terminal.written, /clip-1 .* via http:\/\/gw\.example/);
  });

  it('draws nothing for a render that was waiting on item statuses when the display was cleared', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const terminal = fakeTerminal(80, 24);
    const view = new ProgressView(clientAnswering(gate), true, 5_000, terminal as unknown as ProgressOutput);
    const rendering = view.render(progressOf(1));
    view.clear();
    release();
    await rendering;
    assert.equal(terminal.written, '');
    assert.equal(terminal.listeners(), 0);
  });
});

describe('ProgressView elsewhere (CI logs)', () => {
  it('prints the summary as plain lines, on change and at most every plainEveryMs', async () => {
    const out = fakeTerminal(80, 24);
    const view = new ProgressView(clientAnswering(), false, 60_000, out as unknown as ProgressOutput);
    await view.render(progressOf(2));
    await view.render(progressOf(3));
    assert.equal(out.written, 'narrow: 0/3  0 ok  2 in flight\n');
    view.clear();
    assert.equal(out.written, 'narrow: 0/3  0 ok  2 in flight\n');
  });
});
