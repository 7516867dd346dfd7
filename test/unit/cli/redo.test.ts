// Which takes a redo renders (client/redo.ts, docs/takes.md), from a real local output's manifest and picks.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { chooseRedoTakes } from '../../../client/redo';
import { loadJobFile } from '../../../jobfile';
import type { Plan } from '../../../jobfile/plan';
import { LocalStorage } from '../../../storage/local';
import type { ManifestRow } from '../../../storage/manifest';
import { appendPicks } from '../../../storage/picks';
import { HEAD, RUN_DATE, tempJobDir } from '../jobfile/helpers';
import { manifestRow } from '../../support/storage';

function row(key: string, state: ManifestRow['state'], extra: Partial<ManifestRow> = {}): ManifestRow {
  return manifestRow(key.startsWith('a') ? 1 : 2, {
    key,
    id: key.replace(/~t\d+$/, ''),
    state,
    model: 'm',
    protocol: 'general',
    prompt: 'p',
    task_id: null,
    base_url: null,
    finished_at: '2026-01-01T00:00:00.000Z',
    polls: 0,
    error: state === 'failed' ? { kind: 'render_failed', message: 'x' } : null,
    ...extra,
  });
}

async function setUp(): Promise<{ plan: Plan; storage: LocalStorage }> {
  const dir = tempJobDir({ 'job.yaml': `${HEAD}  variants: 2\nitems:\n  - id: a\n    prompt: one\n  - id: b\n    prompt: two\n` });
  const loaded = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE });
  assert.ok(loaded.ok);
  const storage = new LocalStorage(join(dir, 'out'));
  for (const r of [
    row('a', 'succeeded', { take: 1 }),
    row('a~t2', 'succeeded', { take: 2 }),
    row('b', 'failed', { take: 1 }),
    row('b~t2', 'succeeded', { take: 2 }),
    row('a~t3', 'canceled', { take: 3, redo_of: 'a~t2' }),
    // A take of an item since removed from the job file: a pick is made on a render, so it has a row.
    row('gone~t2', 'succeeded', { take: 2 }),
  ])
    await storage.appendManifest(r);
  const at = '2026-01-01T00:00:00.000Z';
  await appendPicks(storage, [
    { key: 'a~t2', verdict: 'reject', at },
    { key: 'b~t2', verdict: 'reject', at },
    { key: 'gone~t2', verdict: 'reject', at },
    { key: 'a', verdict: 'reject', at },
    { key: 'a', verdict: 'clear', at },
  ]);
  return { plan: loaded.plan, storage };
}

describe('redo takes', () => {
  it('--redo rejected: a new take per rejected take, a stopped redo take continued, a cleared pick and a gone item left alone', async () => {
    const { plan, storage } = await setUp();
    assert.deepEqual(await chooseRedoTakes(plan, storage, { redo: 'rejected' }), {
      takes: [
        { of: 'a~t2', take: 3 },
        { of: 'b~t2', take: 3 },
      ],
      gone: 1,
    });
  });

  it('--redo failed: the failed take; --only: the item past its latest take; both: the chosen takes of those items', async () => {
    const { plan, storage } = await setUp();
    assert.deepEqual((await chooseRedoTakes(plan, storage, { redo: 'failed' })).takes, [{ of: 'b', take: 3 }]);
    assert.deepEqual((await chooseRedoTakes(plan, storage, { only: ['a'] })).takes, [{ of: 'a~t3', take: 4 }]);
    assert.deepEqual((await chooseRedoTakes(plan, storage, { only: ['b~t2'] })).takes, [{ of: 'b~t2', take: 3 }]);
    assert.deepEqual((await chooseRedoTakes(plan, storage, { redo: 'rejected', only: ['b'] })).takes, [{ of: 'b~t2', take: 3 }]);
  });

  it('--only with an id the job does not have is refused, naming it', async () => {
    const { plan, storage } = await setUp();
    await assert.rejects(chooseRedoTakes(plan, storage, { only: ['zz'] }), /--only: no item of this job has the id or key "zz"/);
  });

  it('--only names each id once among its suggestions (takes share their id), the nearest first', async () => {
    const { plan, storage } = await setUp();
    await assert.rejects(chooseRedoTakes(plan, storage, { only: ['zz'] }), (err: Error) => {
      assert.match(err.message, /\(the job's ids: a, b\)$/);
      return true;
    });
    await assert.rejects(chooseRedoTakes(plan, storage, { only: ['bb'] }), /did you mean "b"\?/);
  });
});
