// A gateway's poll hint, however absurd, through the real client and workflows (docs/limits.md).
// Reported: one status answer with `openai-poll-after-ms: 999999999999` made reelflow send one check
// and end the item timed_out at its deadline, though the task had succeeded and polling.max was 2 s.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';

const KEY = 'sk-test-e2e-poll-hint-0123456789';

describe('poll hints (embedded Temporal, real simulator)', () => {
  const e2e = useTemporalAndSimulator(KEY, {
    ports: [0],
    renderMs: [1_500, 2_500],
    seed: 5,
    faults: { pollAfterMs: 999_999_999_999, scope: ['retrieve'] },
  });

  it('checks again within polling.max of an absurd openai-poll-after-ms and downloads the video, exit 0', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'absurd-hint',
      baseUrls: e2e.sim.urls,
      items: [
        { id: 'one', prompt: 'first hinted shot' },
        { id: 'two', prompt: 'second hinted shot' },
      ],
      polling: 'polling:\n  initial: 500ms\n  max: 2s\n  timeout: 93s',
    });
    const started = Date.now();
    const result = await runCli(['run', job], { env: e2e.env });
    const tookMs = Date.now() - started;

    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /absurd-hint: 2 of 2 succeeded/);
    assert.ok(tookMs < 60_000, `finished in ${tookMs} ms, long before the 93 s deadline`);
    const rows = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { state: string; polls: number });
    assert.deepEqual(
      rows.map((r) => r.state),
      ['succeeded', 'succeeded'],
    );
    assert.ok(
      rows.every((r) => r.polls >= 2),
      'checked more than once',
    );
  });
});
