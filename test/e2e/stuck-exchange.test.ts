// A job-wide stop needs job-wide evidence (docs/reruns.md, What stops a job). A hostile gateway that
// holds one task's status check open, a byte at a time past the exchange deadline, while it answers
// every other call at once, fails that item alone: the items after it still run, the run exits 1,
// not 3, and no "stopped" line blames the whole gateway. A gateway that really dies mid-job still
// stops the job with exit 3, the items not yet started left for the next run. Real parts: Temporal,
// the simulator behind a loopback proxy that is the hostile part, the built command.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir, writeJob } from '../support/jobs';
import { recordingProxy, type RecordingProxy } from '../support/recording-proxy';

const KEY = 'sk-test-stuck-exchange-0123456789abcdef';
/** The status check of a task (general protocol), by id. */
const STATUS_PATH = /^\/v1\/video\/generations\/([^/?]+)$/;
const CREATE_PATH = '/v1/video/generations';

interface Row {
  key: string;
  state: string;
  task_id: string | null;
  error: { kind: string; message: string } | null;
}

/**
 * Four items, one at a time, so whatever stops the job leaves items not started. request_timeout
 * 500ms: each exchange has 1 s (two request timeouts), so one check's whole retry budget is seconds.
 */
function writeStuckJob(dir: string, name: string, baseUrl: string): string {
  const job = writeJob(dir, {
    name,
    baseUrls: [baseUrl],
    maxInFlight: 1,
    items: [1, 2, 3, 4].map((n) => ({ id: `i${n}`, prompt: `${name} shot ${n}` })),
  });
  writeFileSync(job, readFileSync(job, 'utf8').replace('gateway:\n', 'gateway:\n  request_timeout: 500ms\n'));
  return job;
}

function manifestRows(dir: string): Row[] {
  return readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Row);
}

describe('a job-wide stop needs job-wide evidence', { timeout: 300_000 }, () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [300, 600], seed: 31 });

  it('one task whose status answer trickles fails alone: the other items run, exit 1, no job-wide stop', { timeout: 240_000 }, async () => {
    let stuckTask: string | undefined;
    let trickled = 0;
    let creates = 0;
    const proxy = await recordingProxy(
      e2e.sim.urls[0]!,
      (req) => {
        if (req.method === 'POST' && req.url === CREATE_PATH) creates += 1;
      },
      {
        answer: (req, res) => {
          const task = req.method === 'GET' ? STATUS_PATH.exec(req.url ?? '')?.[1] : undefined;
          if (task === undefined) return false;
          stuckTask ??= task;
          if (task !== stuckTask) return false;
          // Headers at once, then a byte every 150 ms: never a silence that undici's own timeouts
          // (request_timeout, reset by each byte) would end; only the exchange deadline does.
          trickled += 1;
          res.writeHead(200, { 'content-type': 'application/json' });
          const drip = setInterval(() => res.write(' '), 150);
          res.on('close', () => clearInterval(drip));
          return true;
        },
      },
    );
    try {
      const dir = tempDir('reelflow-stuck-');
      const job = writeStuckJob(dir, 'stuck-check', proxy.url);
      const result = await runCli(['run', job], { env: e2e.env });
      const said = result.stdout + result.stderr;

      assert.equal(result.code, 1, said);
      assert.doesNotMatch(said, /stopped:/, 'no job-wide stop');
      assert.doesNotMatch(said, /bring a gateway base address back/);
      assert.match(result.stdout, /stuck-check: 3 of 4 succeeded/);
      assert.ok(stuckTask !== undefined && trickled > 1, `the stuck check was asked again (${trickled})`);
      assert.equal(creates, 4, 'every item was started, the ones after the stuck one too');

      const rows = manifestRows(dir);
      const stuck = rows.filter((r) => r.task_id === stuckTask);
      assert.equal(stuck.length, 1, JSON.stringify(rows));
      assert.equal(stuck[0]!.state, 'failed');
      assert.equal(stuck[0]!.error?.kind, 'call_unanswered');
      assert.ok(
        stuck[0]!.error.message.includes(`the status check of task ${stuckTask}: ${proxy.url}: no complete answer within 1 s`),
        stuck[0]!.error.message,
      );
      assert.match(stuck[0]!.error.message, /answered a fresh request/);
      const others = rows.filter((r) => r.task_id !== stuckTask);
      assert.deepEqual(
        others.map((r) => r.state),
        ['succeeded', 'succeeded', 'succeeded'],
      );
      assert.ok(!said.includes(KEY));
    } finally {
      await proxy.close();
    }
  });

  it(
    'the only address dies mid-job: the job stops with exit 3, the items not yet started left for the next run',
    { timeout: 240_000 },
    async () => {
      let creates = 0;
      let died = false;
      const proxy: RecordingProxy = await recordingProxy(
        e2e.sim.urls[0]!,
        (req) => {
          if (req.method === 'POST' && req.url === CREATE_PATH) creates += 1;
        },
        {
          answer: (req, res) => {
            if (req.method !== 'GET' || !STATUS_PATH.test(req.url ?? '')) return false;
            // The first status check finds the gateway gone: this connection cut, the port closed.
            if (!died) {
              died = true;
              void proxy.close();
            }
            res.destroy();
            return true;
          },
        },
      );
      try {
        const dir = tempDir('reelflow-stuck-');
        const job = writeStuckJob(dir, 'gateway-dies', proxy.url);
        const started = Date.now();
        const result = await runCli(['run', job], { env: e2e.env });
        const tookMs = Date.now() - started;
        const said = result.stdout + result.stderr;

        assert.equal(result.code, 3, said);
        assert.match(said, new RegExp(`stopped: ${proxy.url.replace(/[.:/]/g, '\\$&')}: `));
        assert.match(said, /fix: bring a gateway base address back/);
        assert.match(said, /3 item\(s\) were not started/);
        assert.equal(creates, 1, 'nothing created after the gateway died');
        const rows = manifestRows(dir);
        assert.equal(rows.length, 1, JSON.stringify(rows));
        assert.equal(rows[0]!.error?.kind, 'gateway_unavailable');
        assert.ok(rows[0]!.task_id, 'the item in flight keeps its task for the next run');
        assert.ok(tookMs < 120_000, `stopped after ${tookMs} ms`);
      } finally {
        await proxy.close();
      }
    },
  );
});
