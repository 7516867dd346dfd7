// A job reads outside its folder only where both its submitter and the worker's user allowed it.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { allowReadsInThisWorker, readScopeForJob } from '../../../activities/worker-read-scope';

describe('readScopeForJob', () => {
  afterEach(() => allowReadsInThisWorker([]));

  it('widens nothing when the worker allowed nothing, whatever the submitter asked', () => {
    allowReadsInThisWorker([]);
    assert.deepEqual(readScopeForJob(['/', '/home/alice/.ssh']), []);
  });

  it('keeps an asked folder inside an allowed one, and an allowed folder inside an asked one', () => {
    allowReadsInThisWorker(['/srv/assets', '/data/shared/brand']);
    assert.deepEqual(readScopeForJob(['/srv/assets/spring', '/data']), ['/srv/assets/spring', '/data/shared/brand']);
  });

  it('does not mistake a sibling with a common prefix for a folder inside', () => {
    allowReadsInThisWorker(['/srv/assets']);
    assert.deepEqual(readScopeForJob(['/srv/assets-private']), []);
    assert.deepEqual(readScopeForJob(undefined), []);
  });
});
