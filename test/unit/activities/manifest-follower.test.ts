// The manifest follower keeps no rows of the items a job's pages have gone past (docs/worker-memory.md):
// a 30,000-item job kept ~0.7 KiB per item there (19 MiB), the largest thing a worker held per item.
// Pure logic over an in-memory manifest; the memory bench measures the worker (BENCHMARKS.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManifestFollower, type Followed, type PageAsk } from '../../../activities/manifest-follower';
import type { ManifestRow } from '../../../storage/manifest/row';
import type { Storage } from '../../../storage/storage';
import { manifestRow } from '../../support/storage';

/** A manifest that only grows; reads return the rows after the cursor (an index), all from the start. */
function manifestOf(rows: ManifestRow[]): { storage: Storage; reads: { fromStart: number } } {
  const reads = { fromStart: 0 };
  const storage = {
    location: '/out',
    readManifestSince(cursor: number | undefined) {
      if (cursor === undefined) reads.fromStart += 1;
      const from = cursor ?? 0;
      return Promise.resolve({ rows: rows.slice(from), skipped: [], fromStart: cursor === undefined, cursor: rows.length });
    },
  } as unknown as Storage;
  return { storage, reads };
}

const keys = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `k${from + i}`);

/** One page as readPlanItems asks and decides it. */
async function page(follower: ManifestFollower, storage: Storage, ask: PageAsk, size = 2): Promise<Followed> {
  const followed = await follower.latest(storage, ask);
  follower.decided(followed, ask, keys(ask.offset, ask.offset + size));
  return followed;
}

describe('manifest follower', () => {
  it('drops the rows of the items a later page has gone past, and ignores their later rows', async () => {
    const rows = [0, 1, 2, 3, 4, 5].map((n) => manifestRow(n));
    const { storage } = manifestOf(rows);
    const follower = new ManifestFollower();
    const A = 'digest-a';
    let seen = await page(follower, storage, { digest: A, offset: 0 });
    assert.deepEqual([...seen.rows.keys()], keys(0, 6));
    // The same page again (an activity's retry): its rows are still there.
    seen = await page(follower, storage, { digest: A, offset: 0 });
    assert.ok(seen.rows.has('k0') && seen.rows.has('k1'));
    // The next page: the first page's items are passed.
    seen = await page(follower, storage, { digest: A, offset: 2 });
    assert.deepEqual([...seen.rows.keys()], keys(2, 6));
    rows.push(manifestRow(0, { state: 'failed' }), manifestRow(4, { state: 'failed' }));
    seen = await page(follower, storage, { digest: A, offset: 4 });
    assert.deepEqual([...seen.rows.keys()].sort(), ['k4', 'k5']);
    assert.equal(seen.rows.get('k4')?.state, 'failed', 'a row of an item not passed is followed');
    assert.deepEqual([...seen.passed].sort(), keys(0, 4));
  });

  it('a new run of the job (an earlier page again) reads every row again, the latest of each', async () => {
    const rows = [0, 1, 2, 3].map((n) => manifestRow(n));
    const { storage, reads } = manifestOf(rows);
    const follower = new ManifestFollower();
    const A = 'digest-a';
    await page(follower, storage, { digest: A, offset: 0 });
    await page(follower, storage, { digest: A, offset: 2 });
    rows.push(manifestRow(1, { state: 'failed' }));
    const again = await page(follower, storage, { digest: A, offset: 0 });
    assert.equal(reads.fromStart, 2);
    assert.deepEqual([...again.rows.keys()].sort(), keys(0, 4));
    assert.equal(again.rows.get('k1')?.state, 'failed');
    assert.equal(again.passed.size, 0);
  });

  it('another job on the same location: every row again, and nothing passed from then on', async () => {
    const rows = [0, 1, 2, 3].map((n) => manifestRow(n));
    const { storage, reads } = manifestOf(rows);
    const follower = new ManifestFollower();
    await page(follower, storage, { digest: 'digest-a', offset: 0 });
    await page(follower, storage, { digest: 'digest-a', offset: 2 });
    const other = await page(follower, storage, { digest: 'digest-b', offset: 0 });
    assert.deepEqual([...other.rows.keys()], keys(0, 4));
    // Both go on, taking turns: all rows stay, and the manifest is not read from its start again.
    for (const ask of [
      { digest: 'digest-a', offset: 4 },
      { digest: 'digest-b', offset: 2 },
      { digest: 'digest-a', offset: 6 },
    ]) {
      const seen = await page(follower, storage, ask);
      assert.deepEqual([...seen.rows.keys()], keys(0, 4), JSON.stringify(ask));
    }
    assert.equal(reads.fromStart, 2);
  });

  it('a whole job paged through keeps only its keys: 30,000 items, 100 a page', async () => {
    const count = 30_000;
    const rows = Array.from({ length: count }, (_, n) => manifestRow(n, { sha256: 'a'.repeat(64), file: `${n}.mp4` }));
    const { storage } = manifestOf(rows);
    const follower = new ManifestFollower();
    let seen: Followed | undefined;
    for (let offset = 0; offset <= count; offset += 100) seen = await page(follower, storage, { digest: 'digest-a', offset }, 100);
    assert.equal(seen!.rows.size, 0);
    assert.equal(seen!.firstFiles.size, 0);
    assert.equal(seen!.passed.size, count);
  });
});
