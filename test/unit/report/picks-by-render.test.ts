// Picks belong to the render that was seen (storage/picks.ts, docs/takes.md): a take rendered again
// for a changed request starts unpicked, its earlier render keeps its pick, `results --kept` lists
// the files a person kept, and picks written before renders were named (a key only) apply to the
// render their key had when they were made.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ManifestRow } from '../../../storage/manifest';
import { parsePicks, pickOn, StandingPicks, type Pick } from '../../../storage/picks';
import { keptFiles } from '../../../client/takes-view';
import { earlierPicked, promptRows } from '../../../review/report/layout';
import { manifestRow } from '../../support/storage';

const at = (minute: number): string => new Date(Date.UTC(2026, 10, 27, 17, minute)).toISOString();

/** Take `a` rendered at 17:10, then again for an edited prompt at 17:30 (a new file beside the old). */
const first = manifestRow(1, { key: 'a', file: '001-a.mp4', sha256: '1'.repeat(64), request_digest: 'd1', finished_at: at(10) });
const again = manifestRow(1, { key: 'a', file: '001-a.714d81c6.mp4', sha256: '2'.repeat(64), request_digest: 'd2', finished_at: at(30) });
const other = manifestRow(2, { key: 'b', file: '002-b.mp4', sha256: '3'.repeat(64), request_digest: 'd3', finished_at: at(10) });
const manifest: ManifestRow[] = [first, other, again];

void describe('picks by render', () => {
  void it('a pick made on a render stays with it: the new render of a changed request starts unpicked', () => {
    const picks = StandingPicks.of([pickOn(first, 'keep', at(19)), pickOn(other, 'reject', at(19))], manifest);
    assert.equal(picks.of(first)?.verdict, 'keep');
    assert.equal(picks.of(again), undefined, 'the new render was never seen');
    assert.equal(picks.of(other)?.verdict, 'reject');
    assert.deepEqual(
      keptFiles(manifest, picks, '/out').map((k) => k.path),
      ['/out/001-a.mp4'],
      'results --kept lists the file that was kept, not the unseen one',
    );
    assert.deepEqual(
      earlierPicked(manifest, picks).map((r) => r.file),
      ['001-a.mp4'],
    );
    const rows = promptRows([other, again], earlierPicked(manifest, picks));
    assert.deepEqual(
      rows.map((r) => r.takes.map((t) => `${t.row.file}${t.earlier ? ' (earlier)' : ''}`)),
      [['001-a.714d81c6.mp4', '001-a.mp4 (earlier)'], ['002-b.mp4']],
    );
  });

  void it('a pick written with only a key applies to the render its key had then, by time', () => {
    const old: Pick[] = parsePicks(`${JSON.stringify({ key: 'a', verdict: 'keep', at: at(19) })}\n`);
    const picks = StandingPicks.of(old, manifest);
    assert.equal(picks.of(first)?.verdict, 'keep', 'the render that existed at 17:19');
    assert.equal(picks.of(again), undefined, 'not the one rendered at 17:30');
    // Made after the new render: it is the new render's.
    const later = StandingPicks.of([{ key: 'a', verdict: 'reject', at: at(40) }], manifest);
    assert.equal(later.of(first), undefined);
    assert.equal(later.of(again)?.verdict, 'reject');
    // Older than every row of its key: it names nothing.
    assert.equal(StandingPicks.of([{ key: 'a', verdict: 'keep', at: at(1) }], manifest).all().length, 0);
  });

  void it('a clear takes back the pick of its own render only; a file whose sha256 changed is not the one picked', () => {
    const picks = StandingPicks.of(
      [pickOn(first, 'keep', at(19)), pickOn(again, 'keep', at(31)), pickOn(again, 'clear', at(32))],
      manifest,
    );
    assert.equal(picks.of(first)?.verdict, 'keep');
    assert.equal(picks.of(again), undefined);
    const replaced = { ...first, sha256: '9'.repeat(64) };
    assert.equal(picks.of(replaced), undefined);
  });

  void it('reads and writes the render of a pick', () => {
    const line = JSON.stringify(pickOn(first, 'reject', at(19), 'logo warped'));
    const [parsed] = parsePicks(line);
    assert.deepEqual(parsed, {
      key: 'a',
      verdict: 'reject',
      at: at(19),
      note: 'logo warped',
      file: '001-a.mp4',
      sha256: '1'.repeat(64),
      request_digest: 'd1',
    });
    assert.throws(() => parsePicks(JSON.stringify({ key: 'a', verdict: 'keep', at: at(1), file: 7 })), /"file" must be a string/);
  });
});
