// An outage as a start line, a count at most every `everyMs`, and an end line (docs/logs.md), with a fake clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OutageLog, RepeatedLines, type OutageLine } from '../../../activities/outage-log';

function observed(everyMs = 10_000): { outage: OutageLog; lines: OutageLine[]; advance: (ms: number) => void } {
  let t = 5_000_000;
  const lines: OutageLine[] = [];
  const outage = new OutageLog({ everyMs, now: () => t, emit: (l) => lines.push(l) });
  return { outage, lines, advance: (ms) => (t += ms) };
}

describe('OutageLog', () => {
  it('a failure every 300 ms for 25 s: one start line, a count every 10 s, one end line', () => {
    const { outage, lines, advance } = observed();
    for (let elapsed = 0; elapsed < 25_000; elapsed += 300) {
      outage.failed('connection refused');
      advance(300);
    }
    outage.recovered();
    assert.deepEqual(
      lines.map((l) => l.phase),
      ['started', 'continues', 'continues', 'ended'],
    );
    assert.deepEqual(lines[0], { phase: 'started', failures: 1, seconds: 0, reason: 'connection refused' });
    assert.equal(lines[1]!.seconds, 10);
    assert.equal(lines[3]!.failures, 84);
    assert.equal(lines[3]!.seconds, 25);
  });

  it('a success without an outage says nothing; after an end, the next failure is a new outage', () => {
    const { outage, lines, advance } = observed();
    outage.recovered();
    assert.equal(lines.length, 0);
    outage.failed();
    advance(2_000);
    outage.recovered();
    assert.equal(outage.open, false);
    outage.failed('again');
    assert.deepEqual(
      lines.map((l) => [l.phase, l.failures]),
      [
        ['started', 1],
        ['ended', 1],
        ['started', 1],
      ],
    );
    assert.equal(lines[0]!.reason, undefined);
  });
});

describe('RepeatedLines', () => {
  it('writes the first of a kind, then at most one per period saying how many were left out', () => {
    let t = 0;
    const repeats = new RepeatedLines(30_000, () => t);
    const written: Array<[string, number]> = [];
    for (let i = 0; i < 100; i++) {
      for (const kind of ['TMPRL1104', 'untracked local activity']) {
        const { write, repeated } = repeats.admit(kind);
        if (write) written.push([kind, repeated]);
      }
      t += 1_000; // 100 s of one line a second of each kind
    }
    assert.deepEqual(written, [
      ['TMPRL1104', 0],
      ['untracked local activity', 0],
      ['TMPRL1104', 29],
      ['untracked local activity', 29],
      ['TMPRL1104', 29],
      ['untracked local activity', 29],
      ['TMPRL1104', 29],
      ['untracked local activity', 29],
    ]);
  });
});
