// The fleet's callback secret (worker/callback-secret.ts, docs/callbacks.md).
import assert from 'node:assert/strict';
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { callbackSecret, callbackSecretPath, CALLBACK_SECRET_ENV } from '../../../worker/callback-secret';
import { tempDir } from '../../support/jobs';

describe('callback secret', () => {
  it('is made once at random beside the key settings, readable by its owner alone, and kept', () => {
    const env = { XDG_CONFIG_HOME: tempDir() };
    const first = callbackSecret(env);
    assert.equal(first.source, callbackSecretPath(env));
    assert.equal(statSync(first.source).mode & 0o777, 0o600);
    assert.ok(first.secret.length >= 32);
    assert.deepEqual(callbackSecret(env).secret, first.secret, 'a second worker of this user reads the same secret');
  });

  it("comes from $REELFLOW_CALLBACK_SECRET when set (a fleet's shared value), which must be long enough", () => {
    const env = { XDG_CONFIG_HOME: tempDir(), [CALLBACK_SECRET_ENV]: 'f'.repeat(40) };
    assert.deepEqual(callbackSecret(env).secret, Buffer.from('f'.repeat(40)));
    assert.throws(() => callbackSecret({ ...env, [CALLBACK_SECRET_ENV]: 'short' }), /at least 32 characters/);
  });

  it('refuses a secret file others can read', () => {
    const env = { XDG_CONFIG_HOME: tempDir() };
    callbackSecret(env);
    chmodSync(callbackSecretPath(env), 0o644);
    assert.throws(() => callbackSecret(env), /readable by others.*chmod 600/);
    writeFileSync(callbackSecretPath(env), 'short\n', { mode: 0o600 });
    chmodSync(callbackSecretPath(env), 0o600);
    assert.throws(() => callbackSecret(env), /at least 32 characters/);
  });
});
