// A 2,000-item job with instant renders: the job workflow continues as new, and no workflow
// history (the job's runs or any item's) exceeds 10,000 events.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type SimHandleExt } from '../../sim';
import { connectClient } from '../../worker/temporal';
import { runCli } from '../support/cli';
import { startTestTemporal, type TestTemporal } from '../support/temporal';
import { tempDir, writeJob } from '../support/jobs';

const KEY = 'sk-test-scale-000000000000';
const ITEMS = 2_000;

describe('a 2,000-item job', () => {
  let temporal: TestTemporal;
  let sim: SimHandleExt;

  before(async () => {
    temporal = await startTestTemporal();
    sim = await startSimulator({ ports: [0], keys: [KEY], renderMs: 0, videoBytes: 16 * 1024, seed: 1, distinctVideos: false });
  });
  after(async () => {
    await sim?.close();
    await temporal?.stop();
  });

  it('continues as new and keeps every history under 10,000 events', async () => {
    const dir = tempDir();
    const items = Array.from({ length: ITEMS }, (_, i) => ({ prompt: `scale item ${i + 1}` }));
    const job = writeJob(dir, {
      name: 'scale',
      baseUrls: sim.urls,
      items,
      maxInFlight: 200,
      polling: 'polling:\n  initial: 200ms\n  max: 1s\n  timeout: 10m',
    });
    const result = await runCli(['run', job], { env: { ...temporal.env, GATEWAY_API_KEY: KEY } });
    // On failure, the summary on stdout names each item that did not succeed and why.
    assert.equal(result.code, 0, `${result.stdout.slice(-2000)}\n${result.stderr.slice(-1000)}`);
    assert.match(result.stdout, new RegExp(`${ITEMS} of ${ITEMS} succeeded`));

    const client = await connectClient({
      address: temporal.address,
      namespace: 'default',
      connectionOptions: { address: temporal.address },
      description: 'test',
    });
    try {
      let jobRuns = 0;
      let largest = 0;
      let children = 0;
      for await (const w of client.workflow.list({ query: "WorkflowId STARTS_WITH 'reelflow-scale'" })) {
        const length = w.historyLength ?? 0;
        largest = Math.max(largest, length);
        if (w.type === 'JobWorkflow') jobRuns++;
        else children++;
      }
      assert.ok(jobRuns >= 2, `the job continued as new (runs: ${jobRuns})`);
      assert.equal(children, ITEMS);
      assert.ok(largest > 0 && largest <= 10_000, `largest history ${largest} events`);
    } finally {
      await client.connection.close();
    }
    const rows = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n');
    assert.equal(new Set(rows.map((r) => (JSON.parse(r) as { key: string }).key)).size, ITEMS);
  });
});
