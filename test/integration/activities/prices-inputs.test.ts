// Prices on the worker's side (issue 24): a job with a pricing_file is planned from its stored
// inputs after its folder is gone (the prices file is stored like items_from), and the price table
// stays out of the settings every activity receives; the budget travels with them.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { preparePlan } from '../../../activities/plan';
import { loadJobFile } from '../../../jobfile';
import { recordingFiles, storeJobInputs } from '../../../storage/inputs-publish';
import { tempDir } from '../../support/jobs';

const cacheDir = tempDir('reelflow-prices-cache-');
process.env.REELFLOW_INPUTS_CACHE = cacheDir;
const cleanup: string[] = [cacheDir];
after(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function writeJobDir(): { dir: string; jobFile: string } {
  const dir = tempDir('reelflow-prices-job-');
  cleanup.push(dir);
  writeFileSync(join(dir, 'prices.json'), JSON.stringify({ 'openai/sora-2': { output_cost_per_video_per_second: 0.1 } }));
  const jobFile = join(dir, 'priced.yaml');
  writeFileSync(
    jobFile,
    [
      'name: priced',
      'gateway:',
      '  base_urls: [http://127.0.0.1:9]',
      'defaults:',
      '  model: sora-2',
      '  protocol: openai',
      '  seconds: "8"',
      'pricing_file: prices.json',
      'budget:',
      '  max_usd: 20',
      'items:',
      '  - prompt: one',
      '  - prompt: two',
      'output:',
      `  dir: ${join(dir, 'out')}`,
      '',
    ].join('\n'),
  );
  return { dir, jobFile };
}

describe('prices on the worker', () => {
  it('the settings carry the budget, not the price table', async () => {
    const { jobFile } = writeJobDir();
    const prepared = await preparePlan({ jobFile, runDate: '2026-03-01', startedAt: Date.now() });
    assert.deepEqual(prepared.settings.budget, { maxUsd: 20 });
    assert.equal('pricing' in prepared.settings, false);
  });

  it('a job with a pricing_file is planned from its stored inputs after its folder is gone', async () => {
    const { dir, jobFile } = writeJobDir();
    const reads = recordingFiles();
    const loaded = await loadJobFile(jobFile, { runDate: '2026-03-01', files: reads });
    assert.ok(loaded.ok, loaded.ok ? '' : JSON.stringify(loaded.errors));
    assert.deepEqual(loaded.plan.pricing, { 'sora-2': { source: 'prices.json (openai/sora-2)', perSecond: 0.1 } });
    assert.deepEqual(
      [...reads.texts.keys()].sort(),
      [join(dir, 'prices.json'), jobFile].sort(),
      'the job file and the prices file were read',
    );
    const storeDir = tempDir('reelflow-prices-store-');
    cleanup.push(storeDir);
    const stored = await storeJobInputs(loaded.plan, reads.texts, { kind: 'dir', dir: storeDir });
    assert.equal(stored.published.files, 2);
    rmSync(dir, { recursive: true, force: true });
    const prepared = await preparePlan({ jobFile, runDate: '2026-03-01', startedAt: Date.now(), inputs: stored.ref });
    assert.equal(prepared.itemCount, 2);
    assert.deepEqual(prepared.settings.budget, { maxUsd: 20 });
  });
});
