// The plan activities read the job file themselves (not through history): pages come from a
// cached plan, and an edit of the file during a run is caught, not silently mixed in.
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { preparePlan, readPlanItems } from '../../../activities/plan';
import { join } from 'node:path';
import { LocalStorage } from '../../../storage/index';
import type { ManifestRow } from '../../../storage/manifest/row';
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
    await new LocalStorage(join(dir, 'out')).appendManifest(
      manifestRow(4, { key: p4.key, id: 'p-4', state: 'failed', prompt: p4.request.prompt, model: p4.request.model }),
    );
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

describe('plan pages and earlier runs (docs/reruns.md)', () => {
  it('hands an item the task its latest row holds, and renders a changed request beside the earlier file', async () => {
    const dir = tempDir();
    const items = ['canceled', 'deleted', 'edited', 'refused', 'render-failed', 'fresh'].map((id) => ({ id, prompt: `prompt of ${id}` }));
    const jobFile = writeJob(dir, { name: 'reruns', baseUrls: ['http://127.0.0.1:9'], items });
    const prepared = await preparePlan({ jobFile, runDate: '2026-11-22', startedAt: Date.now() });
    const read = () =>
      readPlanItems({
        jobFile,
        runDate: prepared.runDate,
        digest: prepared.digest,
        offset: 0,
        limit: 10,
        retryStates: [],
        output: prepared.settings.output,
      });
    const first = new Map((await read()).items.map((i) => [i.id, i]));
    const digestOf = (id: string) => first.get(id)!.requestDigest!;
    assert.match(digestOf('edited'), /^[0-9a-f]{12}$/);
    const storage = new LocalStorage(join(dir, 'out'));
    const createdAt = '2026-11-22T10:00:00.000Z';
    const row = (n: number, id: string, extra: Partial<ManifestRow>) =>
      manifestRow(n, {
        key: id,
        id,
        prompt: `prompt of ${id}`,
        model: first.get(id)!.request.model,
        request_digest: digestOf(id),
        created_at: createdAt,
        ...extra,
      });
    const nameOf = (id: string) => first.get(id)!.outputName;
    mkdirSync(join(dir, 'out'), { recursive: true });
    writeFileSync(join(dir, 'out', `${nameOf('edited')}.mp4`), 'old video');
    await storage.appendManifest(row(1, 'canceled', { state: 'canceled', task_id: 'task-c', error: { kind: 'canceled', message: 'x' } }));
    await storage.appendManifest(row(2, 'deleted', { task_id: 'task-d', file: `${nameOf('deleted')}.mp4`, bytes: 5 }));
    await storage.appendManifest(
      row(3, 'edited', { task_id: 'task-e', file: `${nameOf('edited')}.mp4`, bytes: 9, request_digest: 'an-older-one' }),
    );
    await storage.appendManifest(
      row(4, 'refused', { state: 'failed', task_id: 'task-r', error: { kind: 'auth', message: 'key refused' } }),
    );
    await storage.appendManifest(
      row(5, 'render-failed', { state: 'failed', task_id: 'task-f', error: { kind: 'render_failed', message: 'no' } }),
    );

    const page = new Map((await read()).items.map((i) => [i.id, i]));
    assert.deepEqual(
      [...page.keys()].sort(),
      ['canceled', 'deleted', 'edited', 'fresh', 'refused'],
      'a failed render is not retried by a plain run',
    );
    const at = Date.parse(createdAt);
    assert.deepEqual(page.get('canceled')!.prior, { taskId: 'task-c', protocol: 'general', createdAt: at, baseUrl: 'http://127.0.0.1:1' });
    assert.equal(page.get('deleted')!.prior?.taskId, 'task-d', 'a deleted video: its task is asked again');
    assert.equal(page.get('refused')!.prior?.taskId, 'task-r', 'ended by a job-wide cause: continued');
    assert.equal(page.get('fresh')!.prior, undefined);
    const edited = page.get('edited')!;
    assert.equal(edited.prior, undefined, "another request's task is never reused");
    assert.equal(edited.outputName, `${nameOf('edited')}.${digestOf('edited').slice(0, 8)}`, 'written beside the earlier file');
    assert.equal(page.get('deleted')!.outputName, nameOf('deleted'));
  });
});
