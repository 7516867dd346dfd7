// A hostile gateway as a user meets it: a job whose primary base address is dead, whose
// gateway throws the quirks of docs/protocol.md at it (429s with and without Retry-After, 5xx with
// JSON and HTML bodies, resets, `task_not_exist` right after creation, cut downloads, failure text
// in `result_url`), and whose videos come from a CDN that refuses the API key (both protocols:
// the general one's result_url points at the CDN, the openai content endpoint redirects there).
// Every item must end as the simulator decided, every file intact, no render created twice.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli } from '../support/cli';
import { sha256File } from '../support/media';
import { tempDir, writeJob } from '../support/jobs';

const KEY = 'sk-test-e2e-quirks-0123456789';

type Row = {
  key: string;
  id: string;
  state: string;
  task_id: string | null;
  file: string | null;
  sha256: string | null;
  base_url: string | null;
  error: { kind: string; message: string } | null;
};

describe('a hostile gateway, a dead primary and a key-refusing CDN (issue #4, done when)', () => {
  const e2e = useTemporalAndSimulator(KEY, {
    ports: [0, 0],
    portModes: ['refuse', 'up'],
    renderMs: [600, 1800],
    seed: 404,
    videoBytes: 3 * 1024 * 1024,
    cdn: true,
    contentRedirect: true,
    faults: {
      failRate: 0.2,
      rateLimitRate: 0.15,
      errorRate: 0.15,
      resetRate: 0.1,
      cutDownloadRate: 0.3,
      // Wide enough that a loaded machine (checks late by a second or more) still meets it.
      notExistWindowMs: 2500,
      // Faults that leave a create ambiguous (a 5xx or reset after it was read) would rightly end
      // the item `unknown`; creates here see only what is provably safe to retry (429, refused).
      scope: ['retrieve', 'content'],
    },
  });

  it('completes with every file intact, no duplicate creation, and the key never sent to the CDN', async () => {
    const dir = tempDir();
    const items = Array.from({ length: 10 }, (_, i) => ({
      id: `q-${i + 1}`,
      prompt: `quirks prompt ${i + 1}`,
      ...(i % 2 === 1 ? { model: 'veo-3.1-fast-generate-001' } : {}),
    }));
    const job = writeJob(dir, {
      name: 'quirks',
      baseUrls: e2e.sim.urls,
      items,
      maxInFlight: 5,
      polling: 'polling:\n  initial: 300ms\n  max: 1s\n  timeout: 5m',
      extra: 'models:\n  veo-3.1-fast-generate-001:\n    protocol: openai\nretries:\n  download: 10',
    });
    const result = await runCli(['run', job], { env: e2e.env });
    const stats = e2e.sim.stats();

    const rows = new Map<string, Row>();
    for (const line of readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')) {
      const row = JSON.parse(line) as Row;
      rows.set(row.key, row);
    }
    assert.equal(rows.size, items.length, result.stderr);
    const headers = { authorization: `Bearer ${KEY}` };
    const alternate = e2e.sim.urls[1]!;
    // What the simulator decided and serves, asked with its faults off.
    e2e.sim.setFaults({ failRate: 0, rateLimitRate: 0, errorRate: 0, resetRate: 0, cutDownloadRate: 0, notExistWindowMs: 0 });
    let succeeded = 0;
    let failed = 0;
    for (const row of rows.values()) {
      assert.ok(row.task_id, `${row.id}: no task id (${row.state}: ${row.error?.message ?? ''})`);
      const truth = (
        (await (await request(`${alternate}/v1/video/generations/${row.task_id}`, { headers })).body.json()) as {
          data: { status: string; fail_reason: string; result_url: string };
        }
      ).data;
      if (truth.status === 'FAILURE') {
        failed++;
        assert.equal(row.state, 'failed', `${row.id}: the render failed in the simulator`);
        assert.equal(row.error?.message, truth.fail_reason, `${row.id}: the failure reason is the gateway's`);
        continue;
      }
      succeeded++;
      assert.equal(row.state, 'succeeded', `${row.id}: ${row.error?.kind ?? ''} ${row.error?.message ?? ''}`);
      const file = join(dir, 'out', row.file!);
      assert.ok(existsSync(file), `${row.id}: ${row.file} missing`);
      // The CDN's signed address, fetched without the key, as the client must.
      const served = createHash('sha256');
      for await (const chunk of (await request(truth.result_url)).body) served.update(chunk as Buffer);
      assert.equal(sha256File(file), row.sha256, `${row.id}: the file is what the manifest says`);
      assert.equal(row.sha256, served.digest('hex'), `${row.id}: the file is the video the CDN serves`);
      assert.ok(row.base_url?.includes(new URL(alternate).port), `${row.id}: served by ${row.base_url ?? 'nothing'}, not the alternate`);
    }
    assert.ok(succeeded >= 5 && failed >= 1, `the seed gives both outcomes (succeeded ${succeeded}, failed ${failed})`);
    assert.equal(result.code, failed > 0 ? 1 : 0, result.stderr);

    const creates = Object.entries(stats.createsByPrompt).filter(([p]) => p.startsWith('quirks prompt '));
    assert.equal(creates.length, items.length);
    assert.deepEqual(
      creates.filter(([, n]) => n !== 1),
      [],
      'every render was created exactly once',
    );
    assert.ok(stats.cdnRequests >= succeeded, `every video came from the CDN (${stats.cdnRequests} CDN requests)`);
    assert.equal(stats.cdnAuthHeadersSeen, 0, 'the API key was never sent to the CDN');
    const faults = stats.faults;
    // (The dead primary refuses connections, which the simulator cannot count: every row's
    // base_url being the alternate is the proof that it was failed over.)
    for (const kind of ['429-', '5', 'reset-', 'cut-download', 'task-not-exist']) {
      assert.ok(
        Object.keys(faults).some((k) => k.startsWith(kind)),
        `the run met ${kind} faults (${JSON.stringify(faults)})`,
      );
    }
    assert.ok(!readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8').includes(KEY), 'the key is not in the manifest');
  });
});
