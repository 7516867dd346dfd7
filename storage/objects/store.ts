// The object store: videos (and reelflow's own files) under names at the output location, written
// atomically (local.ts, s3.ts; the parts of a cut write, objects/part-file.ts; paths never through
// a link, objects/safe-path.ts).
import type { Readable } from 'node:stream';

export interface StoredObject {
  /** Object name relative to the output location, with extension (e.g. `001-hero.mp4`). */
  name: string;
  bytes: number;
  /** Hex sha256 when known (local: from the manifest or by hashing; S3: object metadata). */
  sha256?: string;
}

export interface WriteResult {
  name: string;
  bytes: number;
  sha256: string;
  /** Where it landed, for people: an absolute path or `s3://bucket/key`. */
  location: string;
}

export interface WriteOptions {
  /** When given, the write fails (and leaves nothing under the final name) unless exactly this many bytes arrived. */
  expectedBytes?: number;
  /** Called as bytes arrive (total so far), for heartbeats. */
  onProgress?: (bytesSoFar: number) => void;
  /** The write fails, keeping nothing, once more than this many bytes arrive. */
  maxBytes?: number;
  /**
   * Who writes (e.g. the task and address of a download). A partial write is kept under this name
   * and only a write by the same owner resumes it (partialBytes); docs/files.md.
   */
  partOwner?: string;
  /** Replace a file under the name that reelflow did not write (output.overwrite); default: fail naming it. */
  overwrite?: boolean;
  /** Checks the first `bytes` bytes of the whole stored object before it is committed (a resumed write's too). */
  checkStart?: StartCheck;
}

export interface StartCheck {
  bytes: number;
  /** Throws when `head` (fewer bytes when the object is shorter) is not what may be stored. */
  check(head: Buffer): void;
}

/**
 * Where videos land, object by object: written whole or not at all, a kept partial write resumed
 * (local only), listed and checked. One interface for local disk and S3-compatible buckets.
 */
export interface ObjectStore {
  /** Human description of the location: a directory or `s3://bucket/prefix`. */
  readonly location: string;
  /** The object if it exists under its final name (never a partial one). */
  stat(name: string): Promise<StoredObject | undefined>;
  /**
   * Bytes of a partial write of `name` kept from an earlier attempt (local `.part` file), so a
   * download can resume with Range; 0 when there is none or the backend cannot resume. With
   * `owner`, 0 too unless that owner wrote it (a part of another task, or planted, is never resumed).
   */
  partialBytes(name: string, owner?: string): Promise<number>;
  /**
   * Streams `body` to `name` atomically: nothing appears under the final name unless every byte
   * arrived. When `resumeFrom` > 0 the body carries bytes from that offset and is appended to the
   * kept partial write (the sha256 still covers the whole object).
   */
  write(name: string, body: Readable, options?: WriteOptions & { resumeFrom?: number }): Promise<WriteResult>;
  /** Drops a kept partial write, e.g. when the server cannot resume it. */
  discardPartial(name: string): Promise<void>;
  list(): Promise<StoredObject[]>;
  /** Throws a StorageError with a clear message when the location cannot be written. */
  checkWritable(): Promise<void>;
  /**
   * The bytes `start`..`end` (inclusive) of a stored object, for `reelflow review`'s player when the
   * output is not a local directory (a local one is read through storage/objects/safe-path.ts); undefined
   * when there is no such object.
   */
  readObject?(name: string, range: { start: number; end: number }): Promise<Readable | undefined>;
  /** Absolute local path of an object when the backend is a local directory (reports link to it). */
  localPath?(name: string): string;
}
