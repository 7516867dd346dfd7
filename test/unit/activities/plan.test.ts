// The plan activities read the job file themselves (not through history): pages come from a
// cached plan, and an edit of the file during a run is caught, not silently mixed in.
import assert from 'node:assert/strict';
import { appendFileSync, utimesSync } from 'node:fs';
import { describe, it } from 'node:test';
import { preparePlan, readPlanItems } from '../../../activities/plan';
import { join } from 'node:path';
import { LocalStorage } from '../../../storage/index';
import { tempDir, writeJob } from '../../support/jobs';
import { manifestRow } from '../../support/storage';

describe('plan activities', () => {
  it('reads pages of a prepared job, and refuses to continue once the job file changed', async () => {
    const dir = tempDir();
    const items = Array.from({ length: 5 }, (_, i) => ({ id: `p-${i + 1}`, prompt: `plan prompt ${i + 1}` }));
    const jobFile = writeJob(dir, { name: 'paged', baseUrls: ['http://127.0.0.1:9'], items });
    const prepared = await preparePlan({ jobFile, runDate: '2026-11-22', startedAt: Date.now() });
    assert.equal(prepared.itemCount, 5);
    const page = (offset: number) =>
      readPlanItems({
        jobFile,
        runDate: prepared.runDate,
        digest: prepared.digest,
        offset,
        limit: 3,
        retryStates: [],
        output: prepared.settings.output,
      });
    const first = await page(0);
    assert.deepEqual(
      first.items.map((i) => i.id),
      ['p-1', 'p-2', 'p-3'],
    );
    assert.equal(first.nextOffset, 3);
    const second = await page(3);
    assert.deepEqual(
      second.items.map((i) => i.id),
      ['p-4', 'p-5'],
    );

    // A row appended since (p-4 ended failed, which a plain run does not retry) is seen by the next
    // read: the manifest is followed, not frozen at the first page.
    const p4 = second.items[0]!;
    await new LocalStorage(join(dir, 'out')).appendManifest(manifestRow(4, { key: p4.key, id: 'p-4', state: 'failed' }));
    assert.deepEqual(
      (await page(3)).items.map((i) => i.id),
      ['p-5'],
    );
    const retried = await readPlanItems({
      jobFile,
      runDate: prepared.runDate,
      digest: prepared.digest,
      offset: 3,
      limit: 3,
      retryStates: ['failed'],
      output: prepared.settings.output,
    });
    assert.deepEqual(
      retried.items.map((i) => i.id),
      ['p-4', 'p-5'],
      '--retry-failed takes it again',
    );

    appendFileSync(jobFile, '  - prompt: "added while running"\n');
    utimesSync(jobFile, new Date(), new Date(Date.now() + 5_000));
    await assert.rejects(
      page(3),
      (err: Error & { type?: string }) => err.type === 'job_file_changed' && /changed while its job was running/.test(err.message),
    );
  });
});
