// The worst case of one gateway call per kind (gateway/budget.ts), the numbers docs/limits.md gives.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callBudget, createBodyBound, exchangeTimeoutMs, jobCallBudgets, maxFailedAttempts } from '../../../gateway/budget';
import type { RenderRequest } from '../../../jobfile/plan';
import { MAX_REFERENCE_BYTES } from '../../../jobfile/reference-limits';

const T = 30_000;
const request = (over: Partial<RenderRequest> = {}): RenderRequest => ({
  model: 'm',
  protocol: 'general',
  prompt: 'the sea',
  references: [],
  ...over,
});

describe('call budgets', () => {
  it('gives a status check and a message the deadline plus one exchange of two request timeouts', () => {
    assert.deepEqual(callBudget('status', { requestTimeoutMs: T, baseCount: 1 }), { timeMs: 180_000, requests: 14 });
    assert.deepEqual(callBudget('message', { requestTimeoutMs: T, baseCount: 2 }), { timeMs: 180_000, requests: 14 });
    assert.equal(callBudget('status', { requestTimeoutMs: T, baseCount: 3 }).requests, 16);
    assert.equal(maxFailedAttempts(1), 6);
  });

  it('gives a create its body at 1 MB/s on top, and a remote reference fetch before it', () => {
    assert.equal(callBudget('create', { requestTimeoutMs: T, baseCount: 1 }).timeMs, 180_000);
    assert.equal(callBudget('create', { requestTimeoutMs: T, baseCount: 1, bodyBytes: 50_000_000 }).timeMs, 230_000);
    assert.equal(callBudget('create', { requestTimeoutMs: T, baseCount: 1, fetchesReference: true }).timeMs, 180_000 + 160_000);
    assert.equal(exchangeTimeoutMs(T), 60_000);
    assert.equal(exchangeTimeoutMs(T, 1_500_000), 61_500);
  });

  it('bounds a create body: local files as base64, inline data as written, an openai remote image at the reference limit', () => {
    const sizes = (path: string) => (path === '/in/a.png' ? 3_000_000 : undefined);
    const local = createBodyBound(
      request({ references: [{ kind: 'image', role: 'reference_image', source: '/in/a.png', local: true }] }),
      sizes,
    );
    assert.ok(local >= 4_000_000 && local < 4_010_000, `got ${local}`);
    const unknown = createBodyBound(
      request({ references: [{ kind: 'image', role: 'reference_image', source: '/in/b.png', local: true }] }),
      sizes,
    );
    assert.ok(unknown > MAX_REFERENCE_BYTES, 'a file of unknown size counts at the limit');
    const inline = createBodyBound(
      request({
        references: [{ kind: 'image', role: 'reference_image', source: `data:image/png;base64,${'A'.repeat(30_000)}`, local: false }],
      }),
      sizes,
    );
    assert.ok(inline > 30_000 && inline < 40_000, `got ${inline}`);
    const remote = { kind: 'image' as const, role: 'reference_image', source: 'https://cdn.example/a.png', local: false };
    assert.ok(createBodyBound(request({ references: [remote] }), sizes) < 10_000, 'general sends the address');
    assert.ok(
      createBodyBound(request({ protocol: 'openai', references: [remote] }), sizes) > MAX_REFERENCE_BYTES,
      'openai uploads the image',
    );
  });

  it('takes a job create budget from its largest request', () => {
    const gateway = { requestTimeoutMs: T, baseUrls: ['http://a', 'http://b'] };
    const big = request({ prompt: 'x'.repeat(2_000_000) });
    const budgets = jobCallBudgets(gateway, [request(), big, request({ prompt: 'y' })], () => undefined);
    assert.equal(budgets.status, 180_000);
    assert.equal(budgets.message, 180_000);
    assert.equal(
      budgets.create,
      callBudget('create', { requestTimeoutMs: T, baseCount: 2, bodyBytes: createBodyBound(big, () => undefined) }).timeMs,
    );
    assert.ok(budgets.create >= 182_000);
  });
});
