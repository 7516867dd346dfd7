// The key disabled in the real new-api v0.10.0 while a job renders (docs/reruns.md): the job starts
// no more items, the items in flight end (their checks are refused) keeping their tasks, the run
// exits 2 naming the key, and once the key is enabled again a plain `run` finishes the job with one
// paid create per item at the upstream. Build first: bash scripts/build.sh
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli, startCli } from '../support/cli';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { GATEWAY_MODELS, manifestRows, startNewApi, writeGatewayJob, type Gateway } from '../support/gateways';
import { tempDir } from '../support/jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';
import { until } from '../support/wait';

describe('a key disabled in new-api mid-run', { timeout: 600_000 }, () => {
  let temporal: TestTemporal;
  let upstream: FakeUpstream;
  let newApi: Gateway;

  before(async () => {
    [temporal, upstream] = await Promise.all([startTestTemporal(), startFakeUpstream({ renderMs: 1000 })]);
    newApi = await startNewApi(upstream);
  });
  after(async () => {
    await newApi?.stop();
    await upstream?.stop();
    await temporal?.stop();
  });

  it('stops the job after the items in flight, exit 2 naming the key; enabled again, a plain run creates each item once', async () => {
    const dir = tempDir();
    const items = Array.from({ length: 5 }, (_, i) => ({ id: `off-${i + 1}`, prompt: `key off ${i + 1}: a tide pool at dawn` }));
    const job = writeGatewayJob(dir, {
      name: 'new-api-key-off',
      baseUrls: [newApi.url],
      defaults: [`model: ${GATEWAY_MODELS.general}`, 'protocol: general', 'seconds: "5"'],
      items,
      extra: ['concurrency:', '  max_in_flight: 2'],
    });
    const env = { ...temporal.env, GATEWAY_API_KEY: newApi.key };
    const run = startCli(['run', job], { env });
    // new-api reads the upstream every 15 s: both tasks are still rendering for a while after their creates.
    await until(() => upstream.createCount() >= 2, 120_000, 'two creates at the upstream');
    await newApi.setKeyEnabled!(false);
    const stopped = await run.done;
    assert.equal(stopped.code, 2, `${stopped.stdout}\n${stopped.stderr}\n${newApi.output()}`);
    assert.match(stopped.stdout, /stopped: the gateway refused the key in \$GATEWAY_API_KEY/);
    assert.match(stopped.stdout, /3 item\(s\) were not started/);
    assert.equal(upstream.createCount(), 2, 'nothing created after the key was disabled');
    const rows = [...manifestRows(`${dir}/out`).values()];
    assert.equal(rows.length, 2, JSON.stringify(rows));
    assert.ok(
      rows.every((r) => r.error?.kind === 'auth' && r.task_id),
      JSON.stringify(rows.map((r) => [r.key, r.state, r.error?.kind, r.task_id])),
    );
    assert.ok(!stopped.stdout.includes(newApi.key) && !stopped.stderr.includes(newApi.key), 'the key is never printed');

    await newApi.setKeyEnabled!(true);
    const again = await runCli(['run', job], { env });
    assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
    assert.match(again.stdout, /5 of 5 succeeded/);
    assert.equal(upstream.createCount(), 5, 'one paid create per item over both runs');
    const after = manifestRows(`${dir}/out`);
    for (const row of rows) assert.equal(after.get(row.key)?.task_id, row.task_id, `${row.key} kept its task`);
  });
});
