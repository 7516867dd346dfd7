// The table of recent jobs (`reelflow status`): how each job ended, and rows that fit the terminal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jobEnd, jobTable, type JobListRow } from '../../../cli/commands/operate';
import type { JobResult } from '../../../workflows/types';

const counts = { pending: 0, in_flight: 0, succeeded: 0, failed: 0, timed_out: 0, canceled: 0, unknown: 0, skipped: 0 };
const result = (over: Partial<JobResult>): JobResult => ({
  job: 'j',
  total: 28,
  counts: { ...counts, succeeded: 28 },
  startedAt: 0,
  finishedAt: 1,
  notStarted: 0,
  canceled: false,
  ...over,
});

describe('status: the table of recent jobs', () => {
  it('says how a completed job ended: all succeeded, some not, canceled, stopped by a cause', () => {
    assert.equal(jobEnd(result({})), 'completed');
    assert.equal(jobEnd(result({ counts: { ...counts, failed: 28 } })), 'completed: 28 of 28 not succeeded');
    assert.equal(jobEnd(result({ canceled: true, counts: { ...counts, canceled: 3 } })), 'canceled');
    assert.equal(
      jobEnd(result({ stoppedBy: { kind: 'model_unavailable', message: 'm', fix: 'f', exitCode: 2 }, counts: { ...counts } })),
      'stopped: model_unavailable',
    );
  });

  it('cuts a long id with … so that every row fits the width, and keeps the columns aligned', () => {
    const row = (id: string, end: string): JobListRow => ({
      id,
      end,
      succeeded: null,
      items: null,
      started: '2026-11-25T07:00:00.123Z',
      closed: null,
    });
    const lines = jobTable([row(`reelflow-${'x'.repeat(63)}`, 'completed: 3 of 28 not succeeded'), row('reelflow-short', 'running')], 80);
    for (const line of lines) assert.ok([...line].length <= 80, line);
    assert.match(lines[1]!, /^reelflow-x+… +completed: 3 of 28 not succeeded +2026-11-25 07:00:00Z$/);
    const column = (line: string) => line.indexOf('2026');
    assert.equal(column(lines[1]!), column(lines[2]!));
    assert.equal(lines[0]!.indexOf('STARTED'), column(lines[1]!));
  });
});
