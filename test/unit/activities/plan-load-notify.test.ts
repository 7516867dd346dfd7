// A worker expands a job file with its own notify.yaml, which may not define every name the job
// file gives (a schedule applied from another machine): the job is still expanded and rendered, and
// that name's delivery is given up (activities/notify.ts, docs/notifications.md "Fleets and
// schedules"). Validation on the submitter's side still refuses an undefined name.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadJobFile } from '../../../jobfile';
import { expandPlan } from '../../../activities/plan-load';
import { tempDir, writeJob } from '../../support/jobs';

describe("a worker's plan and the job file's notify names", () => {
  it('expands a job file naming a target this worker does not define; validation still refuses it', async () => {
    const dir = tempDir();
    const settings = join(dir, 'notify.yaml');
    writeFileSync(settings, 'demo:\n  ntfy: https://ntfy.example/demo\n');
    const saved = process.env.REELFLOW_NOTIFY_CONFIG;
    process.env.REELFLOW_NOTIFY_CONFIG = settings;
    try {
      const job = writeJob(dir, {
        name: 'worker-notify',
        baseUrls: ['http://127.0.0.1:9'],
        items: [{ id: 'w1', prompt: 'a worker without the target' }],
        extra: 'notify: [demo, elsewhere]',
      });
      const expanded = await expandPlan(job, '2026-11-28', undefined);
      assert.deepEqual(expanded.plan.notify, ['demo', 'elsewhere']);
      assert.equal(expanded.plan.items.length, 1);
      const validated = await loadJobFile(job, { runDate: '2026-11-28' });
      assert.equal(validated.ok, false);
      assert.match(JSON.stringify(!validated.ok && validated.errors), /elsewhere.*not defined/);
    } finally {
      if (saved === undefined) delete process.env.REELFLOW_NOTIFY_CONFIG;
      else process.env.REELFLOW_NOTIFY_CONFIG = saved;
    }
  });
});
