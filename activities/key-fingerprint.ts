// A fingerprint of the key a job was started with, so that a worker holding another key for the
// same variable refuses the job's gateway calls instead of paying for them (docs/keys.md). It is in
// the job's input, so in workflow history: HMAC-SHA256 keyed by a random salt of its own and
// truncated to 64 bits. It tells equal keys apart from different ones and nothing more: without
// the key, the fingerprint cannot be turned back into it, and the salt makes every job's
// fingerprint of the same key different (no table of precomputed fingerprints helps).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const VERSION = 'hmac-sha256-64';

function mac(salt: string, key: string): string {
  return createHmac('sha256', salt).update(key, 'utf8').digest('hex').slice(0, 16);
}

/** `hmac-sha256-64:<salt>:<mac>` of `key`, with a fresh random salt unless one is given (tests). */
export function keyFingerprint(key: string, salt: string = randomBytes(12).toString('hex')): string {
  return `${VERSION}:${salt}:${mac(salt, key)}`;
}

/**
 * Whether `key` is the key `fingerprint` was made of. A fingerprint of an unknown form (a newer
 * reelflow) is not accepted: the worker cannot tell, and it must not spend a key it cannot check.
 */
export function isKeyOf(fingerprint: string, key: string): boolean {
  const [version, salt, expected] = fingerprint.split(':');
  if (version !== VERSION || !salt || !expected) return false;
  const actual = Buffer.from(mac(salt, key));
  const wanted = Buffer.from(expected);
  return actual.length === wanted.length && timingSafeEqual(actual, wanted);
}

/**
 * The same fingerprint every time for one key and one `purpose`: for what must be shared by every
 * job on a key (the shared limits' limiter id, activities/limiter.ts), where the per-job salt above
 * would tell equal keys apart. 64 bits of an HMAC keyed by the purpose; the key cannot be had back.
 */
export function stableKeyFingerprint(key: string, purpose: string): string {
  return mac(purpose, key);
}
