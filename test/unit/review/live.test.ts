// What `reelflow review` knows of its job (review/live.ts), on a real local output directory:
// rows read incrementally with versions, only the job's own videos and posters servable, picks
// written one at a time to picks.jsonl and announced.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStorage } from '../../../storage';
import { readPicks } from '../../../storage/picks';
import { LiveJob, type LiveChange } from '../../../review/live';
import { manifestRow } from '../../support/storage';

void describe('LiveJob', () => {
  void it('reads new rows with versions, serves only the job s files, and writes picks in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-live-'));
    try {
      const storage = new LocalStorage(dir);
      // The start of an MP4 (an ftyp box): a poster is shown only for a file that starts as a video.
      await writeFile(join(dir, '1.mp4'), '\0\0\0\x18ftypisom\0\0\0\0');
      await mkdir(join(dir, 'posters'));
      await writeFile(join(dir, 'posters', '1.mp4.jpg'), 'jpeg');
      await storage.appendManifest(manifestRow(1, { file: '1.mp4', bytes: 16 }));
      const live = new LiveJob({ storage, localDir: dir, tools: {} });
      const seen: LiveChange[] = [];
      live.subscribe((c) => seen.push(c));
      await live.start();
      assert.equal(live.version, 1);
      assert.equal(live.servable('1.mp4'), 'video');
      assert.equal(live.servable('posters/1.mp4.jpg'), 'poster');
      assert.equal(live.servable('manifest.jsonl'), undefined);
      assert.equal(live.servable('.reelflow/picks.jsonl'), undefined);
      assert.equal(live.servable('2.mp4'), undefined, 'a file no row names');

      await storage.appendManifest(manifestRow(2, { state: 'failed', error: { kind: 'x', message: 'y' } }));
      await storage.appendManifest(manifestRow(1, { file: '1.mp4', bytes: 16, take: 2 }));
      await live.refresh();
      assert.deepEqual(
        seen.map((c) => (c.kind === 'take' ? `${c.version}:${c.key}` : '')),
        ['1:k1', '2:k2', '3:k1'],
      );
      assert.equal(live.rows.get('k1')?.take, 2, 'the latest row of a key counts');
      assert.deepEqual(
        live.since(1).map((c) => c.version),
        [2, 3],
        'what a page of version 1 missed',
      );
      await live.refresh();
      assert.equal(live.version, 3, 'nothing new, nothing sent');

      await Promise.all([
        live.decide({ key: 'k1', verdict: 'keep', at: '2026-01-01T00:00:00Z' }),
        live.decide({ key: 'k2', verdict: 'reject', note: 'too dark', at: '2026-01-01T00:00:01Z' }),
        live.decide({ key: 'k1', verdict: 'clear', at: '2026-01-01T00:00:02Z' }),
      ]);
      assert.deepEqual(
        (await readPicks(storage)).map((p) => `${p.key}:${p.verdict}`),
        ['k1:keep', 'k2:reject', 'k1:clear'],
        'concurrent picks are written one after another, none lost',
      );
      assert.deepEqual(
        live.picks.all().map((p) => p.key),
        ['k2'],
      );
      assert.equal(seen.filter((c) => c.kind === 'pick').length, 3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
