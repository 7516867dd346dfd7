// What a gateway activity reports when its call found no base address answering
// (activities/job-wide-evidence.ts, docs/reruns.md): `gateway_unavailable`, which stops the job with
// exit 3, only when a fresh read of each address fails too; `call_unanswered`, the item's own
// failure, when an address answers it. The status check activity with a real gateway client, over
// real HTTP, against scripted loopback gateways. (End to end through a job: test/e2e/stuck-exchange.test.ts.)
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { closeActivityResources } from '../../../activities/context';
import { checkTask } from '../../../activities/render';
import type { JobSettings } from '../../../jobfile/plan';
import { json, scripted, type Scripted } from '../../support/scripted-gateway';
import { acceptKeylessJobsInThisWorker } from '../../../activities/job-key-check';

// The jobs here are built by the test, with no starter's key fingerprint: this process carries them as a
// worker started with --accept-keyless-jobs does (docs/keys.md).
acceptKeylessJobsInThisWorker(true);

const KEY = 'sk-test-job-wide-evidence-0000';
process.env.GATEWAY_API_KEY = KEY;

/** request_timeout 200 ms: each exchange has 400 ms, one check's whole retry budget a few seconds. */
function settings(job: string, baseUrls: string[]): JobSettings {
  return {
    job,
    gateway: { baseUrls, apiKeyEnv: 'GATEWAY_API_KEY', requestTimeoutMs: 200 },
    concurrency: { maxInFlight: 1 },
    polling: { initialMs: 1_000, maxMs: 1_000, timeoutMs: 60_000 },
    retries: { create: 'safe', download: 1 },
    output: { storage: 'local', dir: '/nonexistent' },
  };
}

/** Headers at once, then a byte every 50 ms: only the exchange deadline ends it. */
function trickle(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const drip = setInterval(() => res.write(' '), 50);
  res.on('close', () => clearInterval(drip));
}

const isCatalog = (req: IncomingMessage) => req.method === 'GET' && req.url === '/v1/models';
const CATALOG = { object: 'list', data: [{ id: 'seedance-1-0-pro-250528', object: 'model' }] };

async function failureOf(job: JobSettings, taskId: string, startToCloseTimeoutMs = 60_000): Promise<ApplicationFailure> {
  const env = new MockActivityEnvironment({ startToCloseTimeoutMs });
  let failure: unknown;
  await env
    .run(checkTask, { settings: job, taskId, protocol: 'general' as const, createdAt: Date.now() })
    .catch((e: unknown) => (failure = e));
  assert.ok(failure instanceof ApplicationFailure, String(failure));
  return failure;
}

const catalogReads = (gw: Scripted) => gw.seen.filter((s) => s.method === 'GET' && s.path === '/v1/models').length;

describe('a gateway activity that found no address answering', { timeout: 120_000 }, () => {
  after(closeActivityResources);

  it('one task held open while the gateway answers a fresh read: the item fails alone (call_unanswered), retryable', async () => {
    const gw = await scripted((req, res) => (isCatalog(req) ? json(res, 200, CATALOG) : trickle(res)));
    const failure = await failureOf(settings('held-open', [gw.url]), 'task-held');
    assert.equal(failure.type, 'call_unanswered');
    assert.equal(failure.nonRetryable, false, 'another attempt may get through');
    assert.ok(
      failure.message.startsWith(`the status check of task task-held: ${gw.url}: no complete answer within 0.4 s`),
      failure.message,
    );
    assert.ok(failure.message.endsWith(`${gw.url} answered a fresh request just after, so the gateway is up and only this item failed`));
    assert.equal(catalogReads(gw), 1, 'one fresh read');
    const bearer = gw.seen.find((s) => s.path === '/v1/models')?.headers.authorization;
    assert.equal(bearer, `Bearer ${KEY}`, 'the read goes as the preflight does, with the key the rule allows');
    assert.ok(!failure.message.includes(KEY));
  });

  it('every address down, the fresh read too: gateway_unavailable as before (the job stops, exit 3)', async () => {
    const gw = await scripted((_req, res) => json(res, 503, { error: { message: 'upstream down' } }));
    const failure = await failureOf(settings('all-down', [gw.url]), 'task-down');
    assert.equal(failure.type, 'gateway_unavailable');
    assert.match(failure.message, /HTTP 503|upstream down/);
    assert.ok(catalogReads(gw) >= 1, 'the addresses were asked afresh');
  });

  it('a port where nothing listens: gateway_unavailable', async () => {
    const gw = await scripted((_req, res) => json(res, 200, {}));
    await gw.close();
    const failure = await failureOf(settings('refused', [gw.url]), 'task-refused');
    assert.equal(failure.type, 'gateway_unavailable');
    assert.match(failure.message, /ECONNREFUSED|connection refused/);
  });

  it('two addresses, one dead and one holding the task open: the live one is named, the item fails alone', async () => {
    const dead = await scripted((_req, res) => json(res, 200, {}));
    await dead.close();
    const holding = await scripted((req, res) => (isCatalog(req) ? json(res, 200, CATALOG) : trickle(res)));
    const failure = await failureOf(settings('one-of-two', [dead.url, holding.url]), 'task-two');
    assert.equal(failure.type, 'call_unanswered');
    assert.match(failure.message, new RegExp(`; ${holding.url.replace(/[.:/]/g, '\\$&')} answered a fresh request`));
    assert.ok(!failure.message.includes(`${dead.url} answered`));
  });

  it('no time left in the activity for a fresh read: the failure stays as the call ended', async () => {
    const gw = await scripted((req, res) => (isCatalog(req) ? json(res, 200, CATALOG) : trickle(res)));
    // The call outlives this activity's own timeout (a mock does not enforce it): nothing is left.
    const failure = await failureOf(settings('no-time', [gw.url]), 'task-late', 1_000);
    assert.equal(failure.type, 'gateway_unavailable');
    assert.equal(catalogReads(gw), 0, 'no read was started');
  });
});
