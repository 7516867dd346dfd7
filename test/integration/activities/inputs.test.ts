// A worker reads a job from its stored inputs (activities/inputs.ts, activities/plan.ts): with the
// job's directory gone, the plan comes from the fetched copies under the original paths, and a
// create's local references resolve to verified cached copies with the original bytes.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { withStoredReferences } from '../../../activities/inputs';
import { fileChunks, localFilePiece } from '../../../gateway/streamed-body';
import { preparePlan, readPlanItems } from '../../../activities/plan';
import { loadJobFile } from '../../../jobfile';
import { recordingFiles, storeJobInputs } from '../../../storage/inputs/publish';
import { tempDir } from '../../support/jobs';
import { acceptKeylessJobsInThisWorker } from '../../../activities/job-key-check';

// The jobs here are built by the test, with no starter's key fingerprint: this process carries them as a
// worker started with --accept-keyless-jobs does (docs/keys.md).
acceptKeylessJobsInThisWorker(true);

const cacheDir = tempDir('reelflow-inputs-cache-');
process.env.REELFLOW_INPUTS_CACHE = cacheDir;
const cleanup: string[] = [cacheDir];
after(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function writeJobDir(): { dir: string; jobFile: string; images: Record<string, Buffer> } {
  const dir = tempDir('reelflow-inputs-job-');
  cleanup.push(dir);
  mkdirSync(join(dir, 'assets'));
  const images = { 'a.png': randomBytes(5000), 'b.jpg': randomBytes(7000) };
  for (const [name, bytes] of Object.entries(images)) writeFileSync(join(dir, 'assets', name), bytes);
  writeFileSync(
    join(dir, 'rows.csv'),
    'id,prompt,image\none,first {place},assets/a.png\ntwo,second {place},assets/b.jpg\nthree,third {place},assets/a.png\n',
  );
  const jobFile = join(dir, 'stored.yaml');
  writeFileSync(
    jobFile,
    [
      'version: 1',
      'name: stored-inputs',
      'gateway:',
      '  base_urls: [http://127.0.0.1:9]',
      'defaults:',
      '  model: seedance-1-0-pro-250528',
      '  seconds: "5"',
      'vars:',
      '  place: a harbour',
      'items_from:',
      '  file: rows.csv',
      'output:',
      `  dir: ${join(dir, 'out')}`,
      '',
    ].join('\n'),
  );
  return { dir, jobFile, images };
}

describe('a worker reading a job from its stored inputs', () => {
  it('plans and resolves references from the store after the job directory is gone', async () => {
    const { dir, jobFile, images } = writeJobDir();
    const reads = recordingFiles();
    const loaded = await loadJobFile(jobFile, { runDate: '2026-03-01', files: reads });
    assert.ok(loaded.ok);
    assert.deepEqual([...reads.texts.keys()].sort(), [jobFile, join(dir, 'rows.csv')].sort(), 'the job file and items_from were read');
    const storeDir = tempDir('reelflow-inputs-store-');
    cleanup.push(storeDir);
    const stored = await storeJobInputs(loaded.plan, reads.texts, { kind: 'dir', dir: storeDir });
    assert.equal(stored.published.files, 4, 'job file, CSV and two images: a.png once for its two items');
    assert.equal(stored.published.uploaded, 5, 'and the index');
    const again = await storeJobInputs(loaded.plan, reads.texts, { kind: 'dir', dir: storeDir });
    assert.equal(again.published.uploaded, 0, 'what is there is not uploaded again');
    assert.equal(again.ref.index, stored.ref.index, 'the same inputs have the same index');

    // The submitter's directory is gone, as on another machine.
    rmSync(join(dir, 'assets'), { recursive: true });
    rmSync(join(dir, 'rows.csv'));
    writeFileSync(jobFile, 'version: 1\nname: edited-after-start\n');

    const prepared = await preparePlan({ jobFile, runDate: '2026-03-01', startedAt: Date.now(), inputs: stored.ref });
    assert.equal(prepared.itemCount, 3);
    assert.equal(prepared.settings.job, 'stored-inputs', 'the stored version, not the edited file');
    assert.deepEqual(prepared.settings.inputs, stored.ref, "the items' creates learn where the references are");
    const page = await readPlanItems({
      jobFile,
      runDate: prepared.runDate,
      digest: prepared.digest,
      offset: 0,
      limit: 10,
      retryStates: [],
      output: prepared.settings.output,
      inputs: stored.ref,
    });
    assert.deepEqual(
      page.items.map((i) => [i.id, i.request.prompt, i.request.references[0]?.source]),
      [
        ['one', 'first a harbour', join(dir, 'assets', 'a.png')],
        ['two', 'second a harbour', join(dir, 'assets', 'b.jpg')],
        ['three', 'third a harbour', join(dir, 'assets', 'a.png')],
      ],
      'items name the original paths',
    );

    for (const item of page.items) {
      const request = await withStoredReferences(prepared.settings, item.request);
      const [ref] = request.references;
      assert.ok(ref?.local);
      assert.ok(ref.source.startsWith(cacheDir), ref.source);
      const original = item.request.references[0]!.source;
      assert.ok(ref.source.endsWith(`/${original.slice(original.lastIndexOf('/') + 1)}`), 'same file name, same extension');
      const bytes = images[original.endsWith('a.png') ? 'a.png' : 'b.jpg']!;
      assert.ok(readFileSync(ref.source).equals(bytes));
      // The create sends the cached copy as a checked reference: its bytes against the index's sha256.
      assert.deepEqual(ref.checked, {
        path: ref.source,
        root: dirname(ref.source),
        sha256: createHash('sha256').update(bytes).digest('hex'),
      });
      const piece = await localFilePiece(ref, 'raw');
      const sent: Buffer[] = [];
      for await (const chunk of fileChunks(piece)) sent.push(chunk);
      assert.ok(Buffer.concat(sent).equals(bytes));
    }
  });

  it('a job whose stored index is gone fails at once, naming the digest and the store', async () => {
    const storeDir = tempDir('reelflow-inputs-store-');
    cleanup.push(storeDir);
    const index = 'ab'.repeat(32);
    await assert.rejects(
      preparePlan({
        jobFile: '/nowhere/job.yaml',
        runDate: '2026-03-01',
        startedAt: Date.now(),
        inputs: { location: { kind: 'dir', dir: storeDir }, index },
      }),
      (error: Error & { type?: string; nonRetryable?: boolean }) =>
        error.type === 'storage' && error.nonRetryable === true && error.message.includes(index) && error.message.includes(storeDir),
    );
  });

  it('a job without stored inputs keeps its references at their paths', async () => {
    const { jobFile } = writeJobDir();
    const prepared = await preparePlan({ jobFile, runDate: '2026-03-01', startedAt: Date.now() });
    assert.equal(prepared.settings.inputs, undefined);
    const page = await readPlanItems({
      jobFile,
      runDate: prepared.runDate,
      digest: prepared.digest,
      offset: 0,
      limit: 1,
      retryStates: [],
      output: prepared.settings.output,
    });
    const request = page.items[0]!.request;
    assert.equal(await withStoredReferences(prepared.settings, request), request);
  });
});
