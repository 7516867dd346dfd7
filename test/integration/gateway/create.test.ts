import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AmbiguousCreateError, AuthError, ModelUnavailableError, RateLimitedError, createGatewayClient } from '../../../gateway/index';
import { KEY, assertNoKey, harness, render, type Harness } from './helpers';

describe('creation follows docs/protocol.md §6', () => {
  let h: Harness;
  before(async () => {
    h = await harness({ ports: [0, 0] });
  });
  after(async () => h.close());

  it('a lost create response -> AmbiguousCreateError, exactly one create seen', async () => {
    h.sim.setFaults({ lostCreateRate: 1 });
    try {
      await assert.rejects(h.client.createTask(render('lost-create')), (e: unknown) => {
        assert.ok(e instanceof AmbiguousCreateError);
        assert.equal(e.attempts, 1);
        assert.equal(e.retryable, false);
        assertNoKey(JSON.stringify(e) + e.message + String(e.stack) + JSON.stringify(e.cause));
        return true;
      });
      assert.equal(h.sim.stats().createsByPrompt['lost-create'], 1);
    } finally {
      h.sim.setFaults({ lostCreateRate: 0 });
    }
  });

  it('createRetries always: ambiguous creates are retried (bounded)', async () => {
    const always = createGatewayClient({ baseUrls: h.sim.urls, apiKey: KEY, createRetries: 'always', maxAttempts: 3, cooldownMs: 50 });
    h.sim.setFaults({ lostCreateRate: 1 });
    try {
      await assert.rejects(always.createTask(render('lost-always')), (e: unknown) => e instanceof AmbiguousCreateError && e.attempts === 3);
      assert.equal(h.sim.stats().createsByPrompt['lost-always'], 3);
    } finally {
      h.sim.setFaults({ lostCreateRate: 0 });
      await always.close();
    }
  });

  it('connection resets on create: never more than one create per item', async () => {
    h.sim.setFaults({ resetRate: 0.5, scope: ['create'] });
    try {
      let ambiguous = 0;
      for (let i = 0; i < 12; i += 1) {
        try {
          await h.client.createTask(render(`reset-${i}`));
        } catch (e) {
          assert.ok(e instanceof AmbiguousCreateError, String(e));
          ambiguous += 1;
        }
        assert.ok((h.sim.stats().createsByPrompt[`reset-${i}`] ?? 0) <= 1);
      }
      assert.ok(ambiguous > 0, 'some resets were seen');
    } finally {
      h.sim.setFaults({ resetRate: 0, scope: [] });
    }
  });

  it('429 waits and retries on the same base, not counted as a base failure', async () => {
    h.sim.setFaults({ rateLimitRate: 0.6, scope: ['create'] });
    // A client of its own: the shared one's bases may still be cooling down from the resets above.
    const logs: string[] = [];
    const client = createGatewayClient({ baseUrls: h.sim.urls, apiKey: KEY, log: (_level, message) => logs.push(message) });
    try {
      for (let i = 0; i < 3; i += 1) {
        const created = await client.createTask(render(`limited-${i}`));
        assert.equal(created.baseUrl, h.sim.urls[0], 'no failover because of 429');
        assert.equal(h.sim.stats().createsByPrompt[`limited-${i}`], 1);
      }
      assert.ok(logs.some((l) => /rate limited/.test(l)));
    } finally {
      h.sim.setFaults({ rateLimitRate: 0, scope: [] });
      await client.close();
    }
  });

  it('429 beyond the retry budget -> RateLimitedError', async () => {
    const strict = createGatewayClient({ baseUrls: h.sim.urls, apiKey: KEY, maxRateLimitRetries: 1, maxRetryAfterMs: 200 });
    h.sim.setFaults({ rateLimitRate: 1, rateLimitKind: 'empty', scope: ['create'] });
    try {
      await assert.rejects(strict.createTask(render('always-limited')), RateLimitedError);
      assert.equal(h.sim.stats().createsByPrompt['always-limited'] ?? 0, 0);
    } finally {
      h.sim.setFaults({ rateLimitRate: 0, rateLimitKind: 'mixed', scope: [] });
      await strict.close();
    }
  });

  it('an unknown model -> ModelUnavailableError with the catalog advice (404 and 503 model_not_found)', async () => {
    for (const as503 of [false, true]) {
      h.sim.setFaults({ modelNotFoundAs503: as503 });
      await assert.rejects(h.client.createTask(render(`bad-model-${as503}`, { model: 'seedance-9-ultra-991231' })), (e: unknown) => {
        assert.ok(e instanceof ModelUnavailableError);
        assert.equal(e.status, as503 ? 503 : 404);
        assert.match(e.message, /model "seedance-9-ultra-991231" is not available to this key/);
        assert.match(e.message, /check the model name against the catalog and that the key was created in the matching token group/);
        return true;
      });
    }
    h.sim.setFaults({ modelNotFoundAs503: false });
    assert.equal(h.sim.stats().createsByPrompt['bad-model-true'] ?? 0, 0);
  });

  it('a bad key -> AuthError naming the key variable, without the key', async () => {
    const wrong = 'sk-wrong-key-abcdefghijklmnop';
    const bad = createGatewayClient({ baseUrls: h.sim.urls, apiKey: wrong, apiKeyEnv: 'REELFLOW_TEST_KEY' });
    try {
      await assert.rejects(bad.createTask(render('bad-key')), (e: unknown) => {
        assert.ok(e instanceof AuthError);
        assert.equal(e.status, 401);
        assert.match(e.message, /\$REELFLOW_TEST_KEY/);
        assert.ok(!`${e.message}${String(e.stack)}${JSON.stringify(e)}`.includes(wrong));
        return true;
      });
      await assert.rejects(bad.getTask({ taskId: 'x', protocol: 'openai' }), AuthError);
    } finally {
      await bad.close();
    }
  });

  it('openai protocol: multipart create with a local reference image', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'gw-int-'));
    try {
      const png = Buffer.from(
        '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6300010000050001' +
          '0d0a2db40000000049454e44ae426082',
        'hex',
      );
      await writeFile(join(dir, 'ref.png'), png);
      const created = await h.client.createTask(
        render('openai-ref', {
          protocol: 'openai',
          model: 'veo-3.1-fast-generate-001',
          seconds: '4',
          size: '1280x720',
          references: [{ kind: 'image', role: 'reference_image', source: join(dir, 'ref.png'), local: true }],
        }),
      );
      assert.match(created.taskId, /\S/);
      assert.equal(h.sim.stats().createsByPrompt['openai-ref'], 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('messages: exactly the promised headers', async () => {
    const answer = await h.client.createMessage({ model: 'claude-haiku-4-5', maxTokens: 64, prompt: 'a red fox' });
    assert.ok(answer.text.length > 0);
    assert.equal(answer.baseUrl, h.sim.urls[0]);
    const stats = h.sim.stats() as unknown as { messagesAuth: Record<string, number>; anthropicVersions: Record<string, number> };
    assert.ok((stats.messagesAuth['x-api-key'] ?? 0) >= 1);
    assert.deepEqual(Object.keys(stats.anthropicVersions), ['2023-06-01']);
  });

  it('never logs the key', () => {
    assertNoKey(h.logs.join('\n'));
  });
});
