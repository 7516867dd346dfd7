// The callback listener over real HTTP (worker/callback-listener.ts, docs/callbacks.md): what it
// passes on to the render workflows (here: recorded, in place of Temporal's signal) and what it refuses.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startCallbackListener, type CallbackListener, type SignalOutcome } from '../../../worker/callback-listener';
import { mintCallbackToken } from '../../../gateway/callback-token';

const secret = Buffer.from('listener-test-secret-0123456789abcdef');
const running = 'reelflow-cb/one';
const ended = 'reelflow-cb/ended';

describe('callback listener', () => {
  let listener: CallbackListener;
  const signalled: string[] = [];
  before(async () => {
    listener = await startCallbackListener({
      host: '127.0.0.1',
      port: 0,
      secret,
      warn: () => undefined,
      signal: (id): Promise<SignalOutcome> => {
        signalled.push(id);
        return Promise.resolve(id === ended ? 'gone' : 'signalled');
      },
    });
  });
  after(() => listener.close());

  const post = (token: string, body: string | Buffer = '{"status":"succeeded"}', method = 'POST') =>
    fetch(`${listener.url}/callbacks/${token}`, {
      method,
      body: method === 'GET' ? undefined : body,
      headers: { 'content-type': 'application/json' },
    });

  it('signals the workflow a valid token names, and says 404 for one that no longer runs', async () => {
    const answer = await post(mintCallbackToken(secret, running));
    assert.equal(answer.status, 200);
    assert.deepEqual(signalled.splice(0), [running]);
    assert.equal((await post(mintCallbackToken(secret, ended))).status, 404);
    assert.deepEqual(signalled.splice(0), [ended]);
  });

  it('refuses forged and unknown tokens with 401, signalling nothing', async () => {
    const token = mintCallbackToken(secret, running);
    for (const bad of [
      token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
      mintCallbackToken(Buffer.from('x'.repeat(40)), running),
      'task_123',
      '',
    ]) {
      assert.equal((await post(bad)).status, 401, bad);
    }
    assert.deepEqual(signalled, []);
  });

  it('refuses bodies over 64 KiB (413) and other methods (405); a body saying the task runs asks no check', async () => {
    const token = mintCallbackToken(secret, 'reelflow-cb/big');
    assert.equal((await post(token, Buffer.alloc(65 * 1024, 'x'))).status, 413);
    assert.equal((await post(token, '', 'GET')).status, 405);
    assert.equal((await post(token, '{"id":"cgt-1","status":"running"}')).status, 200);
    assert.deepEqual(signalled, []);
    assert.equal((await post(token, 'not json at all')).status, 200);
    assert.deepEqual(signalled.splice(0), ['reelflow-cb/big']);
  });

  it('limits each token to a short burst (429), other tokens unaffected', async () => {
    const token = mintCallbackToken(secret, 'reelflow-cb/flood');
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await post(token)).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429]);
    assert.equal(signalled.splice(0).length, 5);
    assert.equal((await post(mintCallbackToken(secret, 'reelflow-cb/calm'))).status, 200);
    assert.deepEqual(signalled.splice(0), ['reelflow-cb/calm']);
  });
});
