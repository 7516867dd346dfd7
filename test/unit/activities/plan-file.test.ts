// The plan a worker keeps: expanded by a child process, its items in an unlinked file read one page
// at a time (activities/plan-file.ts). Pages must be exactly the plan's items, whatever their text.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { loadJobFile } from '../../../jobfile';
import { expandInChild } from '../../../activities/plan-file';
import { planDigest } from '../../../activities/plan-load';
import { tempDir, writeJob } from '../../support/jobs';

describe('the plan file', () => {
  it('pages through exactly the items the job file expands to, multi-byte prompts included', async () => {
    const dir = tempDir();
    const prompts = ['plain', 'café au lait', 'ビデオ 🎬 emoji', 'line\nbreak "quoted"', 'x'.repeat(3000)];
    const items = Array.from({ length: 23 }, (_, i) => ({ id: `f-${i + 1}`, prompt: `${prompts[i % prompts.length]!} ${i + 1}` }));
    const jobFile = writeJob(dir, { name: 'paged-file', baseUrls: ['http://127.0.0.1:9'], items });
    const direct = await loadJobFile(jobFile, { runDate: '2026-11-25' });
    assert.ok(direct.ok);
    // A temporary folder of this test's own (other test files run beside it and make theirs).
    const scratch = tempDir('reelflow-plan-scratch-');
    const tmp = process.env.TMPDIR;
    process.env.TMPDIR = scratch;
    const file = await expandInChild(jobFile, '2026-11-25', undefined).finally(() => {
      if (tmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmp;
    });
    try {
      assert.equal(file.itemCount, 23);
      assert.equal(file.digest, planDigest(direct.plan));
      assert.equal(file.head.job, 'paged-file');
      assert.equal('items' in file.head, false);
      const paged = [];
      for (let offset = 0; offset < file.itemCount; offset += 4) paged.push(...file.items(offset, 4));
      assert.deepEqual(paged, direct.plan.items);
      assert.deepEqual(file.items(21, 10), direct.plan.items.slice(21));
      assert.deepEqual(file.items(23, 5), []);
      // Nothing is left on disk: the items file was unlinked once open.
      // (The child, run through tsx here, leaves tsx's own cache there.)
      assert.deepEqual(
        readdirSync(scratch).filter((name) => name.startsWith('reelflow-plan-')),
        [],
      );
    } finally {
      file.close();
    }
    assert.throws(() => file.items(0, 1), /closed/);
  });

  it("carries a job file's errors as a final failure naming the place", async () => {
    const dir = tempDir();
    const jobFile = writeJob(dir, { name: 'bad-file', baseUrls: ['http://127.0.0.1:9'], items: [{ id: 'a', prompt: 'p' }] });
    const { appendFileSync } = await import('node:fs');
    appendFileSync(jobFile, 'unknown_top_level_key: 1\n');
    await assert.rejects(expandInChild(jobFile, '2026-11-25', undefined), (error: Error & { type?: string; nonRetryable?: boolean }) => {
      assert.equal(error.type, 'job_file_invalid');
      assert.equal(error.nonRetryable, true);
      assert.match(error.message, /\.yaml:\d+:\d+: .*unknown_top_level_key/);
      return true;
    });
  });
});
