// The prices a job's runs priced it with, beside its manifest (storage/records/job-prices.ts): each run
// records the models it uses as it priced them, keeps the others, writes nothing when nothing
// changes; what is read back is only what is a price.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LocalStorage } from '../../../storage/index';
import { JOB_PRICES_RECORD, readJobPrices, recordJobPrices } from '../../../storage/records/job-prices';
import { tempDir } from '../../support/jobs';

const GATEWAY = 'gateway http://127.0.0.1:4000 (/api/pricing)';

describe('job prices record', () => {
  it("records a run's prices; a later run replaces its models' prices, drops one it no longer prices, keeps the others", async () => {
    const dir = join(tempDir(), 'out');
    const storage = new LocalStorage(dir);
    assert.equal(await readJobPrices(storage), undefined, 'nothing recorded yet');
    await recordJobPrices(storage, {}, ['kling-v2-1']);
    assert.equal(await readJobPrices(storage), undefined, 'a run with no price records nothing');

    await recordJobPrices(
      storage,
      { 'kling-v2-1': { source: GATEWAY, perVideo: 0.5 }, 'veo-3.1-fast-generate-001': { source: 'job file', perSecond: 0.1 } },
      ['kling-v2-1', 'veo-3.1-fast-generate-001', 'veo'],
    );
    assert.deepEqual(await readJobPrices(storage), {
      'kling-v2-1': { source: GATEWAY, perVideo: 0.5 },
      'veo-3.1-fast-generate-001': { source: 'job file', perSecond: 0.1 },
    });
    const path = join(dir, '.reelflow', JOB_PRICES_RECORD);
    const written = statSync(path).mtimeMs;
    // The same prices again: the record is left as it is.
    await new Promise((r) => setTimeout(r, 20));
    await recordJobPrices(storage, { 'veo-3.1-fast-generate-001': { source: 'job file', perSecond: 0.1 } }, ['veo-3.1-fast-generate-001']);
    assert.equal(statSync(path).mtimeMs, written);

    // A redo of veo-3.1-fast-generate-001's takes with a new price; then a run that uses kling-v2-1 and has no price for it now.
    await recordJobPrices(storage, { 'veo-3.1-fast-generate-001': { source: 'job file', perSecond: 0.2 } }, ['veo-3.1-fast-generate-001']);
    await recordJobPrices(storage, {}, ['kling-v2-1']);
    assert.deepEqual(await readJobPrices(storage), { 'veo-3.1-fast-generate-001': { source: 'job file', perSecond: 0.2 } });
  });

  it('reads only what is a price: a record that is not one is none, an entry that is not a price is left out', async () => {
    const dir = join(tempDir(), 'out');
    const storage = new LocalStorage(dir);
    mkdirSync(join(dir, '.reelflow'), { recursive: true });
    const path = join(dir, '.reelflow', JOB_PRICES_RECORD);
    writeFileSync(path, 'not json');
    assert.equal(await readJobPrices(storage), undefined);
    // A "__proto__" key, as JSON can hold it (an object literal cannot): never the table's prototype.
    writeFileSync(
      path,
      JSON.stringify({
        prices: {
          good: { source: 'job file', perSecondByResolution: { '720p': 0.1 }, perSecond: 0.05 },
          negative: { source: 'job file', perVideo: -1 },
          text: { source: 'job file', perVideo: '1' },
          nosource: { perVideo: 1 },
          badmap: { source: 'job file', perSecondByResolution: { '720p': 'x' } },
        },
      }).replace('{"prices":{', '{"prices":{"__proto__":{"source":"job file","perVideo":1},'),
    );
    const read = await readJobPrices(storage);
    assert.deepEqual(read, { good: { source: 'job file', perSecond: 0.05, perSecondByResolution: { '720p': 0.1 } } });
    assert.equal(Object.getPrototypeOf(read), Object.prototype);
    assert.match(readFileSync(path, 'utf8'), /negative/, 'reading changes nothing');
  });
});
