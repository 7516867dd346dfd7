// The review page's spend is the job's one spend (client/spend.ts): the prompt rewrites `reelflow
// enhance` paid, which no manifest row counts, are in its header as they are in `status` and the
// report (the built CLI, a real output folder, the page fetched over HTTP).
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalStorage } from '../../storage';
import { RewriteStore, rewriteRecord } from '../../storage/rewrites';
import { tempDir } from '../support/jobs';
import { writeTakesJob } from '../support/review-fixture';
import { startReview, stopReview } from '../support/review-cli';
import type { CliRun } from '../support/cli';

const ENHANCE = { model: 'claude-sonnet-4-6', maxTokens: 400, system: 'Rewrite the idea as one shot.' };

void describe('reelflow review: the spend in its header', { timeout: 180_000 }, () => {
  let dir: string;
  let review: { cli: CliRun; url: string } | undefined;

  before(async () => {
    dir = tempDir('reelflow-review-spend-');
    await mkdir(join(dir, 'out'));
    // One item in two ratios, one take each: two renders at $0.40 (estimated).
    const fixture = await writeTakesJob(join(dir, 'out'), { items: 1, takes: 1 });
    assert.equal(fixture.rows.length, 2);
    // `reelflow enhance` rewrote the prompt before any render: $0.03, from the answer's usage.
    await new RewriteStore(new LocalStorage(join(dir, 'out'))).put(
      rewriteRecord({
        prompt: fixture.rows[0]!.prompt,
        enhance: ENHANCE,
        rewrite: 'A calm tracking shot, 35 mm',
        model: ENHANCE.model,
        paid: { by: 'enhance', cost: { usd: 0.03, source: 'usage' } },
      }),
    );
    await writeFile(
      join(dir, 'shoes.yaml'),
      [
        'version: 1',
        'name: shoes',
        'gateway:\n  base_urls: [http://127.0.0.1:9]',
        'defaults:\n  model: seedance-1-0-pro-250528\n  seconds: "4"',
        `enhance:\n  model: ${ENHANCE.model}\n  max_tokens: ${ENHANCE.maxTokens}\n  system: ${ENHANCE.system}`,
        'output:\n  dir: ./out',
        'items:',
        `  - prompt: ${JSON.stringify(fixture.rows[0]!.prompt)}`,
        '',
      ].join('\n'),
    );
    review = await startReview(join(dir, 'shoes.yaml'));
  });

  after(async () => {
    if (review) await stopReview(review.cli);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('counts the rewrites reelflow enhance paid, as status does', async () => {
    const html = await (await fetch(review!.url)).text();
    const line = /<p class="sub" id="spend">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
    assert.match(line, /^spent \$0\.83 /, `the header says: ${line}`);
  });
});
