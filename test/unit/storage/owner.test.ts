// An output location belongs to one job (storage/records/owner.ts): the first claim leaves the marker, the
// owner's own runs pass, another job is refused naming both; the marker is no output.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LocalStorage } from '../../../storage/index';
import { OWNER_RECORD, OutputOwnedError, claimOutput } from '../../../storage/records/owner';
import { tempDir } from '../../support/jobs';

describe('output owner marker', () => {
  it('claims a new location, lets its job back in, and refuses another job', async () => {
    const dir = join(tempDir(), 'out');
    const storage = new LocalStorage(dir);
    await claimOutput(storage, { job: 'first', workflowId: 'reelflow-first' });
    assert.deepEqual(JSON.parse(readFileSync(join(dir, '.reelflow', OWNER_RECORD), 'utf8')), {
      job: 'first',
      workflowId: 'reelflow-first',
    });
    // The ledger of stored videos lists videos only: a submitter's claim leaves no file a worker of
    // another user would then have to append to (the container test's non-root worker).
    assert.equal(existsSync(join(dir, '.reelflow-stored.jsonl')), false);
    // A scheduled run of the same job has another workflow id: still its own location.
    await claimOutput(storage, { job: 'first', workflowId: 'reelflow-first-2026-11-25T03:00:00Z' });
    await assert.rejects(
      claimOutput(storage, { job: 'second', workflowId: 'reelflow-second' }),
      (error: unknown) =>
        error instanceof OutputOwnedError &&
        error.message.includes(`the output location ${dir} belongs to job "first" (workflow reelflow-first)`) &&
        error.message.includes('job "second" may not write there'),
    );
    assert.deepEqual(await storage.list(), [], 'the marker is not listed as an output');
  });

  it('a marker that is not one counts as none, and is replaced', async () => {
    const dir = join(tempDir(), 'out');
    const storage = new LocalStorage(dir);
    await storage.checkWritable();
    mkdirSync(join(dir, '.reelflow'), { recursive: true });
    writeFileSync(join(dir, '.reelflow', OWNER_RECORD), 'not json');
    await claimOutput(storage, { job: 'first', workflowId: 'reelflow-first' });
    assert.equal(JSON.parse(readFileSync(join(dir, '.reelflow', OWNER_RECORD), 'utf8')).job, 'first');
  });

  it('a marker planted as a link is refused by name, and its target is untouched', async () => {
    const root = tempDir();
    const dir = join(root, 'out');
    mkdirSync(join(dir, '.reelflow'), { recursive: true });
    const elsewhere = join(root, 'elsewhere.json');
    writeFileSync(elsewhere, 'precious');
    symlinkSync(elsewhere, join(dir, '.reelflow', OWNER_RECORD));
    await assert.rejects(claimOutput(new LocalStorage(dir), { job: 'first', workflowId: 'reelflow-first' }), /symbolic link/);
    assert.equal(readFileSync(elsewhere, 'utf8'), 'precious');
  });
});
