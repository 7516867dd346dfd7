// `reelflow enhance` stops on the job-wide causes of domain/failures.ts and on nothing else: its
// pool of rewrites (cli/commands/enhance.ts) against a real gateway client and a gateway over real
// loopback HTTP that answers every Messages call as new-api does when the key's quota is used up
// (403 insufficient_user_quota), or when the key may not use the model (a plain 403).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { enhanceJob } from '../../../client/enhance';
import { loadPlanOrExplain } from '../../../client/jobs';
import { tempDir, writeJob } from '../../support/jobs';

const KEY = 'sk-test-enhance-causes-0123456789';

/** A gateway whose every Messages call gets `status` and `error`; counts the calls. */
async function refusingGateway(
  status: number,
  error: Record<string, string>,
): Promise<{ url: string; calls: () => number; server: Server }> {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/v1/messages')) calls++;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: error }));
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => calls, server };
}

describe('reelflow enhance stops on a job-wide cause, and only on one', () => {
  const servers: Server[] = [];
  after(() => Promise.all(servers.map((s) => new Promise((closed) => s.close(closed)))));
  process.env.ENHANCE_CAUSES_KEY = KEY;

  async function enhanceAgainst(status: number, error: Record<string, string>) {
    const gateway = await refusingGateway(status, error);
    servers.push(gateway.server);
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'enh-causes',
      baseUrls: [gateway.url],
      items: Array.from({ length: 6 }, (_, i) => ({ id: `i${i}`, prompt: `idea ${i}` })),
      maxInFlight: 2,
      extra: 'enhance:\n  model: claude-sonnet-4-6\n  max_tokens: 300',
    });
    const plan = await loadPlanOrExplain(job);
    const planWithKey = { ...plan, gateway: { ...plan.gateway, apiKeyEnv: 'ENHANCE_CAUSES_KEY' } };
    const outcome = await enhanceJob(planWithKey, { again: false, note: () => {} });
    return { outcome, calls: gateway.calls() };
  }

  it('a used-up quota (quota_exhausted) stops it: the two in flight were asked, the rest not', async () => {
    const { outcome, calls } = await enhanceAgainst(403, {
      code: 'insufficient_user_quota',
      message: '用户额度不足, 剩余额度: $0.000000',
      type: 'new_api_error',
    });
    assert.ok(outcome.stoppedBy, 'stopped');
    assert.deepEqual(
      outcome.rewrites.filter((r) => r.error).map((r) => r.error!.kind),
      ['quota_exhausted', 'quota_exhausted'],
    );
    assert.equal(calls, 2);
  });

  it('a key not allowed the model (quota_or_permission, an item failure) does not: every prompt is asked', async () => {
    const { outcome, calls } = await enhanceAgainst(403, { code: '', message: 'model not allowed for this token', type: 'new_api_error' });
    assert.equal(outcome.stoppedBy, undefined);
    assert.equal(outcome.rewrites.filter((r) => r.error?.kind === 'quota_or_permission').length, 6);
    assert.equal(calls, 6);
  });
});
