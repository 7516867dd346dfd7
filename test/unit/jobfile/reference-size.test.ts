// A local reference larger than a gateway can take is a job-file error, at the reference's line and
// column, whether it is written in items or comes from an items_from row. Sparse files: only their
// size counts, nothing is written to disk.
import assert from 'node:assert/strict';
import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { formatJobFileError, loadJobFile } from '../../../jobfile';
import { MAX_REFERENCE_BYTES } from '../../../jobfile/reference-limits';
import { HEAD, RUN_DATE, tempJobDir } from './helpers';

async function sparse(path: string, size: number): Promise<void> {
  await writeFile(path, '');
  await truncate(path, size);
}

async function errorsFor(yaml: string, files: Record<string, string> = {}): Promise<string[]> {
  const dir = tempJobDir({ 'job.yaml': yaml, ...files });
  await sparse(join(dir, 'big.mp4'), MAX_REFERENCE_BYTES + 1);
  await sparse(join(dir, 'fits.mp4'), MAX_REFERENCE_BYTES);
  const result = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE });
  return result.ok ? [] : result.errors.map((e) => formatJobFileError(e).replace(dir, '${DIR}'));
}

const LIMIT_TEXT =
  'is 384.0 MiB (402,653,119 bytes), over the 384.0 MiB (402,653,118 bytes) a local reference may have (the general protocol ' +
  'sends it inline as a data: URL, one JSON string, and 512 MiB of text is the most a gateway can be expected to hold): use a ' +
  'smaller file, or an http(s) URL the gateway can fetch';

describe('the size of a local reference', () => {
  it('over the limit: an error at the reference, naming the file, its size and the limit', async () => {
    const errors = await errorsFor(`${HEAD}items:\n  - prompt: hi\n    references:\n      - video: ./big.mp4\n      - video: ./fits.mp4\n`);
    assert.deepEqual(errors, [`\${DIR}/job.yaml:9:16: items[0].references[0].video file "./big.mp4" ${LIMIT_TEXT}`]);
  });

  it('from an items_from row: at the row, in the CSV file', async () => {
    const errors = await errorsFor(`${HEAD}items_from:\n  file: rows.csv\n`, {
      'rows.csv': 'id,prompt,video\na,hi,./fits.mp4\nb,ho,./big.mp4\n',
    });
    assert.deepEqual(errors, [`\${DIR}/rows.csv:3:6: video file "./big.mp4" ${LIMIT_TEXT}`]);
  });

  it('at the limit: valid', async () => {
    assert.deepEqual(await errorsFor(`${HEAD}items:\n  - prompt: hi\n    references:\n      - video: ./fits.mp4\n`), []);
  });
});
