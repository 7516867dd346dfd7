// The manifest row's take fields (docs/takes.md), filled from the item by activities/record.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ratioOfSize, rowWithTake } from '../../../activities/record';
import type { ManifestRow } from '../../../storage/manifest/row';

const ROW: ManifestRow = {
  key: 'a~t2',
  id: 'a',
  index: 1,
  state: 'succeeded',
  model: 'm',
  protocol: 'general',
  prompt: 'p',
  task_id: 't',
  base_url: null,
  created_at: null,
  finished_at: '2026-01-01T00:00:00.000Z',
  polls: 1,
  file: '001-a-t2.mp4',
  bytes: 1,
  sha256: 'x',
  error: null,
};

describe('manifest row take fields', () => {
  it('general: take, group, vars, redo_of, seed, seconds, ratio, resolution as asked', () => {
    const row = rowWithTake(ROW, {
      take: 2,
      group: 'g1',
      vars: { ratio: '9:16' },
      redoOf: 'a',
      request: { protocol: 'general', seed: 99, seconds: '5', ratio: '9:16', resolution: '1080P' },
    });
    assert.deepEqual(
      {
        take: row.take,
        group: row.group,
        vars: row.vars,
        redo_of: row.redo_of,
        seed: row.seed,
        seconds: row.seconds,
        ratio: row.ratio,
        resolution: row.resolution,
      },
      { take: 2, group: 'g1', vars: { ratio: '9:16' }, redo_of: 'a', seed: 99, seconds: 5, ratio: '9:16', resolution: '1080p' },
    );
  });

  it('openai: ratio and resolution from size; nothing added that the item does not say', () => {
    const row = rowWithTake({ ...ROW, protocol: 'openai' }, { request: { protocol: 'openai', size: '1280x720' } });
    assert.equal(row.ratio, '16:9');
    assert.equal(row.resolution, '720p');
    assert.equal('take' in row, false);
    assert.equal('seed' in row, false);
    assert.equal('seconds' in row, false);
    assert.equal(ratioOfSize('1024x1792'), '4:7');
  });
});
