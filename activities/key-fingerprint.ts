// A fingerprint of the key a job was started with, bound to that job, so that a worker spends its
// key only on the job its holder started (docs/keys.md): a worker holding another key refuses, and
// so does a worker shown a fingerprint copied from another job's history. It is in the job's input,
// so in workflow history, where anyone who reaches the Temporal server can read it: an HMAC under
// the key itself, over a random salt of its own and what makes the job that job (its workflow id,
// its job file or stored inputs, its key variable and gateway addresses), truncated to 64 bits.
// Only a holder of the key can make one; without the key it cannot be turned back into it; the
// salt makes every start's fingerprint of the same key and job different.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { REWRITE_WORKFLOW_PREFIX } from './log-events';

const VERSION = 'hmac-sha256-64-job';
/** The form before fingerprints were bound to their job: any job could carry a copy of one. */
const UNBOUND_VERSION = 'hmac-sha256-64';

/** What a fingerprint is bound to: the job, as its starter and every worker can both name it. */
export interface FingerprintedJob {
  /** The job's workflow id (`reelflow-<name>`; a schedule's runs: the schedule's, before its time suffix). */
  workflowId: string;
  /** The job file's path on the starter's machine (JobInput.jobFile). */
  jobFile: string;
  /** The digest of the job's stored inputs (JobInput.inputs.index), when it has them. */
  inputsIndex?: string;
  /** Where the key goes: its variable and the base addresses, in the job's order. */
  apiKeyEnv: string;
  baseUrls: readonly string[];
}

function mac(key: string, salt: string, job: FingerprintedJob): string {
  const subject = JSON.stringify([salt, job.workflowId, job.jobFile, job.inputsIndex ?? null, job.apiKeyEnv, job.baseUrls]);
  return createHmac('sha256', key).update(subject, 'utf8').digest('hex').slice(0, 16);
}

/** `hmac-sha256-64-job:<salt>:<mac>` of `key` for `job`, with a fresh random salt unless one is given (tests). */
export function keyFingerprint(key: string, job: FingerprintedJob, salt: string = randomBytes(12).toString('hex')): string {
  return `${VERSION}:${salt}:${mac(key, salt, job)}`;
}

/** Why `fingerprint` does not let `key` be spent on `job`; undefined when it does. */
export function fingerprintRefusal(fingerprint: string, key: string, job: FingerprintedJob): 'unbound' | 'mismatch' | undefined {
  const [version, salt, expected, extra] = fingerprint.split(':');
  if (version === UNBOUND_VERSION) return 'unbound';
  // An unknown form (a newer reelflow) is not accepted: the worker cannot tell, and it must not
  // spend a key it cannot check.
  if (version !== VERSION || !salt || !expected || extra !== undefined) return 'mismatch';
  const actual = Buffer.from(mac(key, salt, job));
  const wanted = Buffer.from(expected);
  return actual.length === wanted.length && timingSafeEqual(actual, wanted) ? undefined : 'mismatch';
}

/** Whether `key`, spent on `job`, is what `fingerprint` was made of, for that job. */
export function isKeyOf(fingerprint: string, key: string, job: FingerprintedJob): boolean {
  return fingerprintRefusal(fingerprint, key, job) === undefined;
}

/**
 * The same fingerprint every time for one key and one `purpose`: for what must be shared by every
 * job on a key (the shared limits' limiter id, activities/limiter.ts), where the per-job salt above
 * would tell equal keys apart. 64 bits of an HMAC keyed by the purpose; the key cannot be had back.
 */
export function stableKeyFingerprint(key: string, purpose: string): string {
  return createHmac('sha256', purpose).update(key, 'utf8').digest('hex').slice(0, 16);
}

/**
 * The id of the job a workflow id belongs to: an item's workflow id is its job's id, `/` and its
 * key (workflows/ids.ts); a scheduled run's is its schedule's action id, `-` and the scheduled time
 * (Temporal's form); a prompt rewrite's is its prefix, its job's id, `/` and the rewrite's id
 * (workflows/rewrite.ts). Job names have no `/`.
 */
export function jobIdOfWorkflow(workflowId: string): string {
  const ofJob = workflowId.startsWith(REWRITE_WORKFLOW_PREFIX) ? workflowId.slice(REWRITE_WORKFLOW_PREFIX.length) : workflowId;
  const job = ofJob.split('/')[0]!;
  return job.replace(/-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, '');
}
