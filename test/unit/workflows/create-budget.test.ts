// A create's activity is given the gateway's own worst case for it (gateway/budget.ts), computed
// when the job is planned from its largest body: Temporal cutting a create that was still
// legitimately sending ended the item `unknown`, a render that may have been paid for and was lost.
import assert from 'node:assert/strict';
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import { preparePlan } from '../../../activities/plan';
import { loadJobFile } from '../../../jobfile';
import type { JobSettings } from '../../../jobfile/plan';
import type { ManifestRow } from '../../../storage/manifest/row';
import { tempDir } from '../../support/jobs';
import { runJob, stubActivities, timeSkippingPerTest } from '../../support/time-skipping';

const SECOND = 1_000;
const MIB = 2 ** 20;

describe('the create budget', () => {
  const server = timeSkippingPerTest();

  it('lets a create with a 20 MiB reference take its whole budget, 200 s, and the item succeeds', async () => {
    // request_timeout 30 s. The create's own bound: the 120 s call deadline, then one attempt of
    // 2 x 30 s plus the body at 1 MB/s (20 MiB as base64, 28 MB: 28 s), about 208 s. The activity
    // allowed request_timeout + 140 s = 170 s, whatever the body.
    const takesMs = 200 * SECOND;
    const dir = tempDir('reelflow-unit-');
    const reference = join(dir, 'still.png');
    writeFileSync(reference, '');
    truncateSync(reference, 20 * MIB);
    const jobFile = join(dir, 'big-reference.yaml');
    writeFileSync(
      jobFile,
      [
        'version: 1',
        'name: big-reference',
        'gateway:',
        '  base_urls: [http://127.0.0.1:9]',
        '  request_timeout: 30s',
        'defaults:',
        '  model: seedance-1-0-pro-250528',
        'polling:\n  initial: 10s\n  max: 60s\n  timeout: 1h',
        'output:\n  dir: ./out',
        'items:',
        '  - id: still',
        '    prompt: the sea at dawn',
        '    references:',
        '      - image: ./still.png',
        '',
      ].join('\n'),
    );
    const prepared = await preparePlan({ jobFile, runDate: '2025-01-01', startedAt: Date.now() });
    const loaded = await loadJobFile(jobFile, { runDate: '2025-01-01' });
    assert.ok(loaded.ok);
    const budget = prepared.settings.gateway.callBudgetMs?.create ?? 0;
    assert.ok(budget >= takesMs && budget <= takesMs + 15 * SECOND, `the create's budget, ${budget} ms, is just over 200 s`);
    const plan = { settings: prepared.settings as JobSettings, items: loaded.plan.items };
    const { stubs, events } = stubActivities(server.env, plan, { renderMs: 30 * SECOND });
    const created = stubs.createTaskMarked;
    stubs.createTaskMarked = async (input) => {
      // The create records that it may send (as activities/create-marker.ts does), then sends for
      // `takesMs` on the server's clock, telling Temporal it is alive meanwhile.
      const context = Context.current();
      const alive = () => context.client.activity.heartbeat(context.info.taskToken, { createMaySend: true });
      await alive();
      for (let left = takesMs; left > 0; left -= 10 * SECOND) {
        await server.env.sleep(Math.min(10 * SECOND, left));
        await alive();
      }
      return created(input);
    };

    const result = await runJob(server.env, server.bundle, stubs, 'big-reference');

    const rows = events.flatMap((e) => (e.kind === 'record' ? [e.row] : [])) as ManifestRow[];
    assert.equal(result.counts.succeeded, 1, `item ended ${JSON.stringify(rows.map((r) => [r.state, r.error]))}`);
    assert.equal(events.filter((e) => e.kind === 'create').length, 1, 'one create');
  });
});
