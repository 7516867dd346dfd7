// The fingerprint of the starter's key (docs/keys.md): equal keys match, others do not, and the
// fingerprint holds neither the key nor anything the same key gives in another job.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isKeyOf, keyFingerprint } from '../../../activities/key-fingerprint';

const KEY = 'sk-live-0123456789abcdefghijklmnop';

describe('key fingerprint', () => {
  it('matches the same key only', () => {
    const fingerprint = keyFingerprint(KEY);
    assert.equal(isKeyOf(fingerprint, KEY), true);
    assert.equal(isKeyOf(fingerprint, `${KEY}x`), false);
    assert.equal(isKeyOf(fingerprint, ''), false);
  });

  it('holds no part of the key, and differs per job (random salt)', () => {
    const a = keyFingerprint(KEY);
    const b = keyFingerprint(KEY);
    assert.notEqual(a, b);
    assert.match(a, /^hmac-sha256-64:[0-9a-f]{24}:[0-9a-f]{16}$/);
    for (let i = 0; i + 6 <= KEY.length; i++) assert.ok(!a.includes(KEY.slice(i, i + 6)), KEY.slice(i, i + 6));
  });

  it('is stable for a given salt (a known vector) and refuses unknown forms', () => {
    // HMAC-SHA256(key "salt", message "A"), first 64 bits, as Python's hmac module computes it.
    assert.equal(keyFingerprint('A', 'salt'), 'hmac-sha256-64:salt:f948bf2c04be76f7');
    assert.equal(isKeyOf('sha1:salt:0000000000000000', KEY), false);
    assert.equal(isKeyOf('garbage', KEY), false);
  });
});
