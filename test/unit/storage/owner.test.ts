// An output location belongs to one job (storage/owner.ts): the first claim leaves the marker, the
// owner's own runs pass, another job is refused naming both; the marker is no output.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LocalStorage } from '../../../storage/index';
import { OWNER_MARKER, OutputOwnedError, claimOutput } from '../../../storage/owner';
import { tempDir } from '../../support/jobs';

describe('output owner marker', () => {
  it('claims a new location, lets its job back in, and refuses another job', async () => {
    const dir = join(tempDir(), 'out');
    const storage = new LocalStorage(dir);
    await claimOutput(storage, { job: 'first', workflowId: 'reelflow-first' });
    assert.deepEqual(JSON.parse(readFileSync(join(dir, OWNER_MARKER), 'utf8')), { job: 'first', workflowId: 'reelflow-first' });
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
    writeFileSync(join(dir, OWNER_MARKER), 'not json');
    await claimOutput(storage, { job: 'first', workflowId: 'reelflow-first' });
    assert.equal((await storage.readOwner())?.job, 'first');
  });
});
