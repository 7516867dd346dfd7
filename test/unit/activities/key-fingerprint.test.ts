// The fingerprint of the starter's key (docs/keys.md): the same key for the same job matches; another
// key, or the same key's fingerprint shown for another job, does not; the fingerprint holds neither
// the key nor anything the same key gives in another start.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fingerprintRefusal, isKeyOf, jobIdOfWorkflow, keyFingerprint, type FingerprintedJob } from '../../../activities/key-fingerprint';

const KEY = 'sk-live-0123456789abcdefghijklmnop';
const JOB: FingerprintedJob = {
  workflowId: 'reelflow-spring-campaign',
  jobFile: '/home/a/jobs/spring.yaml',
  apiKeyEnv: 'GATEWAY_API_KEY',
  baseUrls: ['http://127.0.0.1:4000'],
};

describe('key fingerprint', () => {
  it('matches the same key for the same job only', () => {
    const fingerprint = keyFingerprint(KEY, JOB);
    assert.equal(isKeyOf(fingerprint, KEY, JOB), true);
    assert.equal(isKeyOf(fingerprint, `${KEY}x`, JOB), false);
    assert.equal(isKeyOf(fingerprint, '', JOB), false);
  });

  it('is bound to its job: another workflow id, job file, stored inputs or gateway is refused', () => {
    const fingerprint = keyFingerprint(KEY, JOB);
    for (const other of [
      { ...JOB, workflowId: 'reelflow-copycat' },
      { ...JOB, jobFile: '/home/b/jobs/spring.yaml' },
      { ...JOB, inputsIndex: 'a'.repeat(64) },
      { ...JOB, baseUrls: ['http://127.0.0.1:4001'] },
      { ...JOB, apiKeyEnv: 'OTHER_KEY' },
    ]) {
      assert.equal(isKeyOf(fingerprint, KEY, other), false, JSON.stringify(other));
    }
  });

  it('holds no part of the key, and differs per start (random salt)', () => {
    const a = keyFingerprint(KEY, JOB);
    const b = keyFingerprint(KEY, JOB);
    assert.notEqual(a, b);
    assert.match(a, /^hmac-sha256-64-job:[0-9a-f]{24}:[0-9a-f]{16}$/);
    for (let i = 0; i + 6 <= KEY.length; i++) assert.ok(!a.includes(KEY.slice(i, i + 6)), KEY.slice(i, i + 6));
  });

  it('is stable for a given salt, refuses unknown forms, and names the unbound older form', () => {
    assert.equal(keyFingerprint(KEY, JOB, 'salt'), keyFingerprint(KEY, JOB, 'salt'));
    assert.equal(fingerprintRefusal('hmac-sha256-64:salt:f948bf2c04be76f7', 'A', JOB), 'unbound');
    assert.equal(fingerprintRefusal('sha1:salt:0000000000000000', KEY, JOB), 'mismatch');
    assert.equal(fingerprintRefusal('garbage', KEY, JOB), 'mismatch');
    assert.equal(fingerprintRefusal(`${keyFingerprint(KEY, JOB)}:extra`, KEY, JOB), 'mismatch');
  });

  it("finds the job's id in its item and scheduled-run workflow ids", () => {
    assert.equal(jobIdOfWorkflow('reelflow-spring'), 'reelflow-spring');
    assert.equal(jobIdOfWorkflow('reelflow-spring/001-abc'), 'reelflow-spring');
    assert.equal(jobIdOfWorkflow('reelflow-spring-2026-11-27T18:00:00Z'), 'reelflow-spring');
    assert.equal(jobIdOfWorkflow('reelflow-spring-2026-11-27T18:00:00Z/001-abc'), 'reelflow-spring');
    assert.equal(jobIdOfWorkflow('reelflow-spring-2'), 'reelflow-spring-2');
  });
});
