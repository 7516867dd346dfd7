// Job inputs that travel with the job (the claim-check pattern). When a job starts, its job file,
// its items_from data and its local references are stored once, named by their sha256, where every
// worker can read them: a directory every worker mounts, or an S3 prefix. One more object, the
// index (original path -> sha256), is stored the same way; workflow history carries only the
// index's digest and the store's location, so it stays the same size whatever the job's size.
import { createHash } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { OutputSettings, S3OutputSettings } from '../../jobfile/plan';
import { StorageError } from '../objects/errors';

/** Where a job's inputs are stored. Travels through workflow history: no secrets, no contents. */
export type InputLocation =
  | { kind: 'dir'; dir: string }
  /** Objects at `<prefix>sha256/<hex>`; the prefix ends with `/` or is empty. */
  | { kind: 's3'; s3: S3OutputSettings };

/** What a job carries instead of paths: where its inputs are, and the digest of their index. */
export interface InputsRef {
  location: InputLocation;
  /** sha256 of the index object (InputIndex as JSON). */
  index: string;
}

export interface InputEntry {
  sha256: string;
  bytes: number;
  /** Read as text by the job file loader (the job file, items_from); the others are references. */
  text?: true;
}

/** The index object: every input of one job by the absolute path the job file's loader names it. */
export interface InputIndex {
  reelflowInputs: 1;
  jobFile: string;
  files: Record<string, InputEntry>;
}

/** A content-addressed store of job inputs: a shared directory or an S3 prefix. */
export interface InputStore {
  /** For people: a directory or `s3://bucket/prefix`. */
  readonly location: string;
  /** The digests, of those given, that the store does not hold. */
  missing(digests: readonly string[]): Promise<Set<string>>;
  /**
   * Stores the bytes `open()` streams under `sha256`. They are hashed on the way: unless they are
   * exactly `bytes` long with that digest, nothing is kept under the name (InputDigestError).
   */
  put(sha256: string, bytes: number, open: () => Readable): Promise<void>;
  /** The object's bytes; InputMissingError when the store does not hold it. */
  get(sha256: string): Promise<Readable>;
}

/** A job input the store does not hold (deleted, or stored somewhere else than the job says). */
export class InputMissingError extends StorageError {
  constructor(
    readonly sha256: string,
    readonly where: string,
    what = 'job input',
  ) {
    super(`${what} sha256:${sha256} is not in ${where}: run the job again from the machine that has its files, to store them again`);
  }
}

/**
 * Bytes that are not what their name (their sha256) says: another digest, or another size than the
 * index gives. A corrupt or replaced object, or a file edited while it was being stored.
 */
export class InputDigestError extends StorageError {
  constructor(
    readonly expected: string,
    /** `sha256:<hex>`, or the size that arrived. */
    readonly actual: string,
    where: string,
    what = 'job input',
  ) {
    super(`${what} sha256:${expected} from ${where} does not match its digest: got ${actual}; it was refused`);
  }
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Digests become object and file names: nothing but 64 lowercase hex digits gets that far. */
export function checkDigest(sha256: string): string {
  if (!SHA256_HEX.test(sha256)) throw new StorageError(`not a sha256 digest: ${JSON.stringify(sha256.slice(0, 80))}`);
  return sha256;
}

/** reelflow's own objects beside S3 outputs: never an output name (S3Storage refuses it), never listed. */
export const S3_RESERVED_DIR = '.reelflow/';
/** The key prefix of a job's inputs beside its S3 outputs. */
export const S3_INPUTS_DIR = `${S3_RESERVED_DIR}inputs/`;

/** How a user names a store: a directory, or `s3://bucket/prefix` (region and endpoint from the AWS variables). */
export function parseInputLocation(text: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): InputLocation {
  const trimmed = text.trim();
  if (trimmed === '') throw new StorageError('the inputs location is empty: name a shared directory or an s3://bucket/prefix');
  if (/^s3:\/\//i.test(trimmed)) {
    const match = /^s3:\/\/([^/?#]+)\/?([^?#]*)$/i.exec(trimmed);
    if (!match?.[1]) throw new StorageError(`${trimmed} is not an S3 location: write s3://bucket or s3://bucket/prefix`);
    const prefix = match[2] ? `${match[2].replace(/\/+$/, '')}/` : '';
    const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
    // The location travels through workflow history: an address, never credentials.
    if (endpoint && /^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(endpoint)) {
      throw new StorageError(
        'AWS_ENDPOINT_URL(_S3) carries credentials in the address: put them in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY',
      );
    }
    const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
    return { kind: 's3', s3: { bucket: match[1], prefix, region, ...(endpoint ? { endpoint } : {}), forcePathStyle: !!endpoint } };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    throw new StorageError(`${trimmed}: an inputs location is a shared directory or an s3://bucket/prefix`);
  }
  return { kind: 'dir', dir: isAbsolute(trimmed) ? resolve(trimmed) : resolve(cwd, trimmed) };
}

/** Whose inputs: one run's (`run`), or a schedule's, which every later run reads (`schedule apply`). */
export type InputsOwner = 'run' | 'schedule';

/**
 * Where a starting job stores its inputs: the location the user named (flag or REELFLOW_INPUTS),
 * else beside S3 outputs; undefined for local output with no location named, where workers read
 * the files at their paths as before. A schedule's go beside its day folders, not into the one of
 * the day it was applied (`nightly/.reelflow/inputs/` for `nightly/{date}/`): a bucket lifecycle
 * rule that expires old day folders leaves them (docs/deploy.md, "Schedules and lifecycle rules").
 */
export function inputLocationFor(output: OutputSettings, named: string | undefined, owner: InputsOwner = 'run'): InputLocation | undefined {
  if (named !== undefined && named.trim() !== '') return parseInputLocation(named);
  if (output.storage !== 's3' || !output.s3) return undefined;
  const { undatedPrefix, ...s3 } = output.s3;
  const home = owner === 'schedule' && undatedPrefix !== undefined ? undatedPrefix : s3.prefix;
  return { kind: 's3', s3: { ...s3, prefix: home + S3_INPUTS_DIR } };
}

/** The location for people: a directory or `s3://bucket/prefix`. */
export function describeInputLocation(location: InputLocation): string {
  return location.kind === 'dir' ? location.dir : `s3://${location.s3.bucket}/${location.s3.prefix}`;
}

/** Largest index object a worker accepts (about 2 million inputs). */
export const MAX_INDEX_BYTES = 256 * 1024 * 1024;

/** The index object's bytes, canonical (paths sorted), so the same inputs always give the same digest. */
export function encodeInputIndex(jobFile: string, files: ReadonlyMap<string, InputEntry>): Buffer {
  const sorted: Record<string, InputEntry> = {};
  for (const path of [...files.keys()].sort()) sorted[path] = files.get(path)!;
  const index: InputIndex = { reelflowInputs: 1, jobFile, files: sorted };
  return Buffer.from(JSON.stringify(index), 'utf8');
}

/** An index object's bytes, checked against its digest and its shape; the path names it in errors. */
export function decodeInputIndex(bytes: Buffer, sha256: string, where: string): InputIndex {
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== sha256) throw new InputDigestError(sha256, `sha256:${actual}`, where, 'the index of job inputs');
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new StorageError(`the index of job inputs sha256:${sha256} in ${where} is not JSON: ${(error as Error).message}`);
  }
  const index = parsed as Partial<InputIndex>;
  const entries = index.files && typeof index.files === 'object' ? Object.entries(index.files) : undefined;
  const valid =
    index.reelflowInputs === 1 &&
    typeof index.jobFile === 'string' &&
    entries !== undefined &&
    entries.every(
      ([, e]) => typeof e?.sha256 === 'string' && SHA256_HEX.test(e.sha256) && Number.isSafeInteger(e.bytes) && (e.bytes as number) >= 0,
    );
  if (!valid) {
    throw new StorageError(
      `the index of job inputs sha256:${sha256} in ${where} is not one this reelflow reads (a newer version wrote it?)`,
    );
  }
  return index as InputIndex;
}
