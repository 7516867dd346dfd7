// The kept take of each item (storage/records/kept-takes.ts, docs/chains.md): what a need resolves to once
// picks exist, fed to loadJobFile's keptTakes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keptTakes } from '../../../storage/records/kept-takes';
import { pickOn, StandingPicks } from '../../../storage/records/picks';
import { manifestRow } from '../../support/storage';

const at = (minute: number): string => new Date(Date.UTC(2026, 10, 28, 6, minute)).toISOString();
const take = (key: string, n: number, over: Record<string, unknown> = {}) =>
  manifestRow(1, { key, file: `001-shot-1-t${n}.mp4`, sha256: String(n).repeat(64), finished_at: at(n), ...over });

describe('kept takes', () => {
  it('maps an item to its kept take; the one kept last wins; rejected, failed and other items do not count', () => {
    const t1 = take('shot-1', 1);
    const t2 = take('shot-1~t2', 2);
    const t3 = take('shot-1~t3', 3);
    const failed = take('shot-2~t2', 4, { state: 'failed', file: null, sha256: null });
    const rows = [t1, t2, t3, failed];
    const picks = StandingPicks.of(
      [pickOn(t2, 'keep', at(20)), pickOn(t3, 'keep', at(10)), pickOn(t1, 'reject', at(30)), pickOn(failed, 'keep', at(31))],
      rows,
    );
    assert.deepEqual([...keptTakes(rows, picks)], [['shot-1', 'shot-1~t2']]);
  });

  it('no picks: no kept takes (needs stay on take 1)', () => {
    const rows = [take('shot-1', 1), take('shot-1~t2', 2)];
    assert.equal(keptTakes(rows, StandingPicks.of([], rows)).size, 0);
  });
});
