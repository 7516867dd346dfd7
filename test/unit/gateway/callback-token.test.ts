// The token in a callback address (gateway/callback-token.ts, docs/callbacks.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mintCallbackToken, verifyCallbackToken } from '../../../gateway/callback-token';

const secret = Buffer.from('a-fleet-secret-of-at-least-thirty-two-chars');
const other = Buffer.from('another-fleet-secret-of-thirty-two-chars-too');
const workflowId = 'reelflow-nightly/a1b2c3~t2';

describe('callback tokens', () => {
  it('name the workflow they were minted for, for any worker holding the same secret', () => {
    const token = mintCallbackToken(secret, workflowId);
    assert.match(token, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    assert.equal(verifyCallbackToken(Buffer.from(secret), token), workflowId);
  });

  it('are refused under another secret, with a changed MAC, id or version, or when too long', () => {
    const token = mintCallbackToken(secret, workflowId);
    const [, id, mac] = token.split('.') as [string, string, string];
    const otherId = Buffer.from('reelflow-nightly/other').toString('base64url');
    for (const bad of [
      token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
      `v1.${otherId}.${mac}`,
      `v2.${id}.${mac}`,
      `v1.${id}`,
      `v1.${id}.${mac}.x`,
      `v1.${id}=.${mac}`,
      'v1..' + mac,
      `v1.${id}.${'A'.repeat(2_000)}`,
    ]) {
      assert.equal(verifyCallbackToken(secret, bad), undefined, bad.slice(0, 80));
    }
    assert.equal(verifyCallbackToken(other, token), undefined);
  });

  it('carry no secret: the same id under two secrets differs only in its MAC', () => {
    const a = mintCallbackToken(secret, workflowId).split('.');
    const b = mintCallbackToken(other, workflowId).split('.');
    assert.equal(a[1], b[1]);
    assert.notEqual(a[2], b[2]);
    assert.ok(!mintCallbackToken(secret, workflowId).includes(secret.toString('base64url').slice(0, 8)));
  });
});
