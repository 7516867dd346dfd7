// The worker's preflight (activities/preflight.ts, docs/preflight.md): the create activity, run with
// a real gateway client against the simulator over HTTP, reads the catalog once per job and refuses
// the create of a model the catalog lacks without sending it, the failure marked as not sent.
// (The fleet path end to end, with a real Temporal server and a worker process: test/e2e/preflight.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { closeActivityResources } from '../../../activities/context';
import { createTask } from '../../../activities/render';
import type { JobSettings, RenderRequest } from '../../../jobfile/plan';
import { startSimulator, type SimHandleExt } from '../../../sim';
import { acceptKeylessJobsInThisWorker } from '../../../activities/job-key-check';

// The jobs here are built by the test, with no starter's key fingerprint: this process carries them as a
// worker started with --accept-keyless-jobs does (docs/keys.md).
acceptKeylessJobsInThisWorker(true);

const KEY = 'sk-test-worker-preflight-0000';
const OTHER_SECRET = 'sk-other-service-secret-0000';
// GATEWAY_API_KEY may go to loopback gateways unasked (docs/keys.md); OPENAI_API_KEY may not.
process.env.GATEWAY_API_KEY = KEY;
process.env.OPENAI_API_KEY = OTHER_SECRET;

function settings(job: string, baseUrls: string[], apiKeyEnv = 'GATEWAY_API_KEY'): JobSettings {
  return {
    job,
    gateway: { baseUrls, apiKeyEnv, requestTimeoutMs: 5_000 },
    concurrency: { maxInFlight: 1 },
    polling: { initialMs: 1_000, maxMs: 1_000, timeoutMs: 60_000 },
    retries: { create: 'safe', download: 1 },
    output: { storage: 'local', dir: '/nonexistent' },
  };
}

const request = (model: string, prompt: string): RenderRequest => ({ model, protocol: 'general', prompt, seconds: '5', references: [] });

describe('worker preflight in the create activity', () => {
  let sim: SimHandleExt;
  before(async () => {
    sim = await startSimulator({
      ports: [0, 0],
      keys: [KEY],
      models: ['seedance-1-0-pro-250528', 'veo-3.1-fast-generate-001'],
      renderMs: 1000,
    });
  });
  after(async () => {
    await closeActivityResources();
    await sim?.close();
  });

  it('refuses a model the catalog lacks before sending anything; the catalog is read once per job', async () => {
    const job = settings('worker-preflight', sim.urls);
    const env = new MockActivityEnvironment();
    let failure: unknown;
    await env.run(createTask, { settings: job, request: request('seedance-1.0-pro', 'refused one') }).catch((e: unknown) => (failure = e));
    assert.ok(failure instanceof ApplicationFailure, String(failure));
    assert.equal(failure.type, 'model_unavailable');
    assert.equal(failure.nonRetryable, true);
    assert.deepEqual(failure.details, [{ createSent: false }]);
    assert.match(
      failure.message,
      /^model "seedance-1\.0-pro" is not in the gateway's catalog for this key \(GET \/v1\/models on http:\/\/127\.0\.0\.1:\d+ lists 2 models\); closest in the catalog: seedance-1-0-pro-250528, veo-3.1-fast-generate-001\./,
    );
    assert.ok(!failure.message.includes(KEY));
    assert.equal(sim.stats().tasksCreated, 0, 'no create was sent');
    const reads = sim.stats().requests['GET /v1/models'];
    assert.equal(reads, 2, 'one GET per base address');

    // A listed model of the same job: created, without reading the catalog again.
    const created = (await env.run(createTask, { settings: job, request: request('seedance-1-0-pro-250528', 'listed one') })) as {
      taskId: string;
    };
    assert.match(created.taskId, /\S/);
    assert.equal(sim.stats().tasksCreated, 1);
    assert.equal(sim.stats().requests['GET /v1/models'], reads);

    // Another job is read once for itself.
    await env.run(createTask, { settings: settings('another-job', sim.urls), request: request('veo-3.1-fast-generate-001', 'other job') });
    assert.equal(sim.stats().requests['GET /v1/models'], reads + 2);
  });

  it("reads no catalog with a key the worker's rule does not let the job send", async () => {
    const before = sim.stats().requests['GET /v1/models'] ?? 0;
    const createdBefore = sim.stats().tasksCreated;
    let failure: unknown;
    await new MockActivityEnvironment()
      .run(createTask, {
        settings: settings('handed-job', sim.urls, 'OPENAI_API_KEY'),
        request: request('veo-3.1-fast-generate-001', 'never sent'),
      })
      .catch((e: unknown) => (failure = e));
    assert.ok(failure instanceof ApplicationFailure, String(failure));
    assert.equal(failure.type, 'missing_key');
    assert.match(failure.message, /OPENAI_API_KEY/);
    assert.ok(!failure.message.includes(OTHER_SECRET));
    assert.equal(sim.stats().requests['GET /v1/models'] ?? 0, before, 'no catalog read: the key went nowhere');
    assert.equal(sim.stats().tasksCreated, createdBefore, 'no create was sent');
  });
});
