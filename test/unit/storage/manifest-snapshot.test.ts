// The manifest snapshot's pure rules (which row objects a reader still fetches, what a snapshot
// holds), and local output's snapshotManifest(), which only reads manifest.jsonl.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { countManifestItems, LocalStorage } from '../../../storage/local';
import {
  coverageFrom,
  coverageMetadata,
  rowNamesToRead,
  snapshotLines,
  snapshotRows,
  type SnapshotCoverage,
} from '../../../storage/manifest/snapshot';
import { parseManifest } from '../../../storage/manifest/codec';
import { manifestRow, scratchPaths } from '../../support/storage';

const names = ['a.json', 'b.json', 'c.json', 'd.json'];

describe('rowNamesToRead()', () => {
  it('without a snapshot: every row object', () => {
    assert.deepEqual(rowNamesToRead(names, undefined), names);
  });

  it('skips exactly the row objects the snapshot folds in', () => {
    assert.deepEqual(rowNamesToRead(names, { through: 'b.json', folded: 2 }), ['c.json', 'd.json']);
    assert.deepEqual(rowNamesToRead(names, { through: 'd.json', folded: 4 }), []);
    assert.deepEqual(rowNamesToRead(names, { through: '', folded: 0 }), names, 'a snapshot of no row');
  });

  it('reads them all when the listing up to `through` is not what the snapshot folded', () => {
    // One more: a row named before `through` but written after the snapshot (a clock behind).
    assert.deepEqual(rowNamesToRead(names, { through: 'c.json', folded: 2 }), names);
    // One fewer: a folded row object removed by hand.
    assert.deepEqual(rowNamesToRead(names, { through: 'c.json', folded: 4 }), names);
    assert.deepEqual(rowNamesToRead([], { through: 'b.json', folded: 2 }), []);
  });

  it('compares names as S3 orders keys', () => {
    const stamped = ['20260101T000000000Z-000000-aa.json', '20260101T000000000Z-000001-bb.json', '20260101T000001000Z-000000-cc.json'];
    assert.deepEqual(rowNamesToRead(stamped, { through: stamped[1]!, folded: 2 }), [stamped[2]]);
  });
});

describe('snapshot coverage metadata', () => {
  it('round-trips, and refuses what does not prove a coverage', () => {
    const coverage: SnapshotCoverage = { through: 'x.json', folded: 12 };
    assert.deepEqual(coverageFrom(coverageMetadata(coverage)), coverage);
    assert.equal(coverageFrom(undefined), undefined);
    assert.equal(coverageFrom({}), undefined);
    assert.equal(coverageFrom({ 'rows-through': 'x', 'rows-folded': 'many' }), undefined);
    assert.equal(coverageFrom({ 'rows-through': 'x', 'rows-folded': '-1' }), undefined);
    assert.equal(coverageFrom({ 'rows-folded': '3' }), undefined);
  });
});

describe('snapshotRows() and snapshotLines()', () => {
  it('the latest row of each key, in item order, one JSON line each', () => {
    const rows = [
      manifestRow(3),
      manifestRow(1, { state: 'failed' }),
      manifestRow(2),
      manifestRow(1, { task_id: 'again' }),
      { ...manifestRow(2), key: 'k2-edited' },
    ];
    const latest = snapshotRows(rows);
    assert.deepEqual(
      latest.map((r) => [r.key, r.index, r.task_id]),
      [
        ['k1', 1, 'again'],
        ['k2', 2, 't2'],
        ['k2-edited', 2, 't2'],
        ['k3', 3, 't3'],
      ],
    );
    const body = Buffer.concat([...snapshotLines(latest)]);
    assert.deepEqual(parseManifest(body, { file: 'manifest.jsonl', firstLine: 1 }), {
      rows: latest,
      skipped: [],
      completeLength: body.length,
      lines: latest.length,
    });
  });
});

describe('LocalStorage.snapshotManifest()', () => {
  const path = scratchPaths('reelflow-local-snapshot-');

  it('reads manifest.jsonl, counts its items and leaves the file as it was', async () => {
    const storage = new LocalStorage(path());
    assert.deepEqual(await storage.snapshotManifest(), { location: storage.localPath('x').replace(/x$/, 'manifest.jsonl'), items: 0 });
    await storage.appendManifest(manifestRow(1, { state: 'failed' }));
    await storage.appendManifest(manifestRow(2));
    await storage.appendManifest(manifestRow(1));
    const before = readFileSync(`${storage.location}/manifest.jsonl`);
    assert.deepEqual(await storage.snapshotManifest(), { location: `${storage.location}/manifest.jsonl`, items: 2 });
    assert.deepEqual(readFileSync(`${storage.location}/manifest.jsonl`), before, 'every line kept');
  });

  // The job's end used to parse the whole manifest at once to count it (+30 MiB at 30,000 items).
  it('counts a chunk at a time: rows across chunk boundaries, a torn last line, repeated keys', async () => {
    const storage = new LocalStorage(path());
    for (let i = 1; i <= 40; i++) await storage.appendManifest(manifestRow(i));
    for (let i = 1; i <= 10; i++) await storage.appendManifest(manifestRow(i, { state: 'failed' }));
    appendFileSync(`${storage.location}/manifest.jsonl`, '{"key":"torn');
    const fh = await open(`${storage.location}/manifest.jsonl`, 'r');
    try {
      for (const chunk of [7, 100, 333, 1 << 20])
        assert.equal(await countManifestItems(fh, 'manifest.jsonl', chunk), 40, `chunks of ${chunk} bytes`);
    } finally {
      await fh.close();
    }
    assert.equal((await storage.snapshotManifest()).items, 40);
  });
});
