// reelflow as a user runs it against the simulator imitating each real gateway it was tested against
// (test/gateways/OBSERVED.md), so the fast suite covers what the real-gateway suite found:
// LiteLLM's long ids and videos-only protocol, new-api's 15 s refresh (here shortened), its
// result_url under another host name and its content endpoint that ignores Range, v0.10.0's answer
// shapes, and the fetch guard's 403.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { startSimulator, type SimHandleExt, type SimOptionsExt } from '../../sim';
import { runCli } from '../support/cli';
import { sha256File } from '../support/media';
import { tempDir, writeJob, type JobSpec } from '../support/jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

const KEY = 'sk-test-e2e-profiles-0123456789';
const AUTH = { authorization: `Bearer ${KEY}` };

type Row = {
  id: string;
  state: string;
  protocol: string;
  task_id: string | null;
  file: string | null;
  sha256: string | null;
  polls: number;
  download_base_url?: string | null;
  error: { kind: string; message: string } | null;
};

interface Run {
  dir: string;
  code: number | null;
  stderr: string;
  rows: Map<string, Row>;
  sim: SimHandleExt;
}

describe('reelflow against the simulator imitating LiteLLM and new-api (issue #15)', () => {
  let temporal: TestTemporal;
  const sims: SimHandleExt[] = [];
  before(async () => {
    temporal = await startTestTemporal();
  });
  after(async () => {
    await Promise.all(sims.map((s) => s.close()));
    await temporal?.stop();
  });

  async function run(simOptions: SimOptionsExt, job: Omit<JobSpec, 'baseUrls'>): Promise<Run> {
    const sim = await startSimulator({ ...simOptions, keys: [KEY] });
    sims.push(sim);
    const dir = tempDir();
    const path = writeJob(dir, { ...job, baseUrls: sim.urls });
    const result = await runCli(['run', path], { env: { ...temporal.env, GATEWAY_API_KEY: KEY } });
    const manifest = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8');
    assert.ok(!manifest.includes(KEY), 'the key is not in the manifest');
    const rows = new Map<string, Row>();
    for (const line of manifest.trim().split('\n')) {
      const row = JSON.parse(line) as Row;
      rows.set(row.id, row);
    }
    assert.equal(rows.size, job.items.length, result.stderr);
    return { dir, code: result.code, stderr: result.stderr, rows, sim };
  }

  /** The sha256 of what the gateway serves for a finished task, fetched with the key (faults off). */
  async function served(sim: SimHandleExt, taskId: string): Promise<string> {
    sim.setFaults({ cutDownloadRate: 0, fetchGuardPort: undefined });
    const response = await request(`${sim.urls[0]!}/v1/videos/${encodeURIComponent(taskId)}/content`, { headers: AUTH });
    assert.equal(response.statusCode, 200, `content of ${taskId}`);
    const hash = createHash('sha256');
    for await (const chunk of response.body) hash.update(chunk as Buffer);
    return hash.digest('hex');
  }

  function assertSucceeded(r: Run, row: Row): void {
    assert.equal(row.state, 'succeeded', `${row.id}: ${row.error?.kind ?? ''} ${row.error?.message ?? ''}\n${r.stderr}`);
    assert.equal(sha256File(join(r.dir, 'out', row.file!)), row.sha256, `${row.id}: the file is what the manifest says`);
  }

  it('litellm: the openai protocol with ~138-character ids holding + / =, downloads cut and restarted whole (Range ignored)', async () => {
    const items = [1, 2, 3].map((i) => ({ id: `l-${i}`, prompt: `litellm prompt ${i}`, model: 'veo-3.1-fast-generate-001' }));
    const r = await run(
      { profile: 'litellm', renderMs: [600, 1200], seed: 15, faults: { cutDownloadRate: 0.5, scope: ['content'] } },
      {
        name: 'profile-litellm',
        items,
        polling: 'polling:\n  initial: 300ms\n  max: 2s\n  timeout: 3m',
        extra: 'models:\n  veo-3.1-fast-generate-001:\n    protocol: openai\n    seconds: "4"\nretries:\n  download: 10',
      },
    );
    assert.equal(r.code, 0, r.stderr);
    for (const row of r.rows.values()) {
      assertSucceeded(r, row);
      assert.match(row.task_id ?? '', /^video_[A-Za-z0-9+/]{120,}=+$/, 'the create id, whole');
      assert.ok(/[+/]/.test(row.task_id!), row.task_id!);
      assert.equal(row.sha256, await served(r.sim, row.task_id!), `${row.id}: the video LiteLLM serves`);
    }
    const stats = r.sim.stats();
    assert.ok((stats.faults['cut-download'] ?? 0) >= 1, `a download was cut (${JSON.stringify(stats.faults)})`);
    assert.deepEqual(Object.values(stats.createsByPrompt), [1, 1, 1], 'one create per item');
    // The one route LiteLLM does not have that reelflow asks: new-api's free price list, once per run, with no key.
    const others = Object.keys(stats.requests).filter((name) => name.startsWith('other '));
    assert.deepEqual(others, ['other GET /api/pricing'], 'no other request to a route LiteLLM does not have');
  });

  it('new-api: 2 s refresh not over-polled, a Veo result_url on ServerAddress fetched through the base with the key, Range ignored', async (t) => {
    const items = [
      { id: 'n-veo-openai', prompt: 'new-api veo openai', model: 'veo-3.1-fast-generate-001' },
      { id: 'n-veo-general', prompt: 'new-api veo general', model: 'veo-3.1-generate-001' },
      { id: 'n-seedance', prompt: 'new-api seedance' },
      { id: 'n-seedance-2', prompt: 'new-api seedance 2' },
    ];
    const r = await run(
      { profile: 'new-api', refreshMs: 2_000, renderMs: [4_000, 7_000], seed: 16, faults: { cutDownloadRate: 0.5, scope: ['content'] } },
      {
        name: 'profile-new-api',
        items,
        polling: 'polling:\n  initial: 500ms\n  max: 20s\n  timeout: 3m',
        extra: 'models:\n  veo-3.1-fast-generate-001:\n    protocol: openai\n    seconds: "4"\nretries:\n  download: 10',
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const base = r.sim.urls[0]!;
    for (const row of r.rows.values()) assertSucceeded(r, row);
    const viaServerAddress = r.rows.get('n-veo-general')!;
    assert.equal(viaServerAddress.download_base_url, base, 'http://localhost:3000/… was fetched through the base address');
    assert.equal(viaServerAddress.sha256, await served(r.sim, viaServerAddress.task_id!));
    assert.equal(r.rows.get('n-veo-openai')!.sha256, await served(r.sim, r.rows.get('n-veo-openai')!.task_id!));
    const stats = r.sim.stats();
    assert.equal(stats.cdnAuthHeadersSeen, 0, 'the key never went to the Seedance file host');
    assert.ok(stats.cdnRequests >= 2, 'the Seedance videos came from their file host');
    assert.ok((stats.faults['cut-download'] ?? 0) >= 1, `a download was cut (${JSON.stringify(stats.faults)})`);
    // A reading stands for 2 s: checking it more often learns nothing. After the first change of
    // reading, the unchanged-progress back-off allows at most two checks of one reading.
    for (const row of r.rows.values()) {
      const counts = stats.checksByReading[row.task_id!] ?? [];
      t.diagnostic(`${row.id}: checks per refresh round ${JSON.stringify(counts)}`);
      assert.ok(counts.length >= 3, `${row.id}: read over several rounds (${JSON.stringify(counts)})`);
      const afterFirstChange = counts.slice(2);
      assert.ok(
        afterFirstChange.every((n) => n <= 2),
        `${row.id}: checks per refresh round ${JSON.stringify(counts)} (polls ${row.polls})`,
      );
    }
  });

  it('new-api 0.10: task_id create answers, addresses in fail_reason, a failed Seedance render with its real reason', async () => {
    const items = [
      ...[1, 2, 3, 4, 5].map((i) => ({ id: `o-seedance-${i}`, prompt: `old new-api seedance ${i}` })),
      { id: 'o-veo-general', prompt: 'old new-api veo general', model: 'veo-3.1-generate-001' },
      { id: 'o-veo-openai', prompt: 'old new-api veo openai', model: 'veo-3.1-fast-generate-001' },
    ];
    const r = await run(
      { profile: 'new-api-0.10', refreshMs: 1_000, renderMs: [1_000, 2_500], seed: 11, faults: { failRate: 0.4 } },
      {
        name: 'profile-new-api-010',
        items,
        polling: 'polling:\n  initial: 500ms\n  max: 5s\n  timeout: 3m',
        extra: 'models:\n  veo-3.1-fast-generate-001:\n    protocol: openai\n    seconds: "4"',
      },
    );
    let failed = 0;
    for (const row of r.rows.values()) {
      const truth = (
        (await (await request(`${r.sim.urls[0]!}/v1/video/generations/${row.task_id!}`, { headers: AUTH })).body.json()) as {
          data: { status: string; fail_reason: string; data: { error?: { code: string; message: string } } };
        }
      ).data;
      // A Veo task (new-api's Gemini channel) reads {status: "failed", url: reason} there, nothing nested.
      if (truth.status === 'failed') {
        failed++;
        assert.equal(row.state, 'failed', row.id);
        continue;
      }
      if (truth.status === 'FAILURE') {
        failed++;
        assert.equal(row.state, 'failed', row.id);
        assert.equal(truth.fail_reason, 'task failed');
        const { code, message } = truth.data.error!;
        const reason = message.includes(code) ? message : `${message} (${code})`;
        // The general view says "task failed" and nests the reason; the openai view's error object has it whole.
        if (row.protocol === 'general') {
          assert.equal(row.error?.message, `task failed: ${reason}`, `${row.id}: the upstream's reason, not only "task failed"`);
        } else {
          assert.ok(row.error?.message.includes(message), `${row.id}: the upstream's reason (${row.error?.message})`);
        }
        continue;
      }
      assertSucceeded(r, row);
      if (row.id.startsWith('o-seedance')) {
        assert.equal(row.download_base_url, r.sim.cdnUrl, `${row.id}: fetched from the address in fail_reason, the upstream's file host`);
      }
    }
    assert.ok(failed >= 1 && failed <= items.length - 3, `the seed gives both outcomes (failed ${failed})`);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.rows.get('o-seedance-1')!.task_id ?? '', /^cgt-\d+-[0-9a-f]{6}$/, 'the id of a {"task_id"} create answer');
    const veo = r.rows.get('o-veo-general')!;
    if (veo.state === 'succeeded')
      assert.equal(veo.download_base_url, r.sim.urls[0], 'its url address on localhost:3000, fetched through the base');
    assert.equal(r.sim.stats().cdnAuthHeadersSeen, 0, 'the key never went to the Seedance file host');
  });

  it("new-api's fetch guard: a download failure in the server's words, not a key or quota error, and the job goes on", async () => {
    const items = [
      { id: 'g-1', prompt: 'guarded 1', model: 'veo-3.1-fast-generate-001' },
      { id: 'g-2', prompt: 'guarded 2', model: 'veo-3.1-fast-generate-001' },
    ];
    const r = await run(
      { profile: 'new-api', refreshMs: 500, renderMs: 600, faults: { fetchGuardPort: 19180 } },
      {
        name: 'profile-fetch-guard',
        items,
        polling: 'polling:\n  initial: 300ms\n  max: 2s\n  timeout: 2m',
        extra: 'models:\n  veo-3.1-fast-generate-001:\n    protocol: openai\n    seconds: "4"\nretries:\n  download: 2',
      },
    );
    assert.equal(r.code, 1, r.stderr);
    for (const row of r.rows.values()) {
      assert.equal(row.state, 'failed', row.id);
      assert.equal(row.error?.kind, 'download', `${row.id}: ${row.error?.kind ?? ''} ${row.error?.message ?? ''}`);
      assert.match(row.error?.message ?? '', /request blocked: port 19180 is not allowed/);
      assert.doesNotMatch(row.error?.message ?? '', /quota|token group|API key/i);
    }
    assert.doesNotMatch(r.stderr, /refused the configured API key|quota/i);
  });
});
