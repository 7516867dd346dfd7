import type { Readable } from 'node:stream';
import type { ManifestRow } from './manifest';
import type { SkippedRow } from './manifest-codec';
import type { ManifestSnapshot } from './manifest-snapshot';

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

declare const manifestCursor: unique symbol;

/** Where a reader of a manifest got to. Opaque: only the storage that made it looks inside. */
export type ManifestCursor = { readonly [manifestCursor]: true };

/** Manifest rows as read, and the rows left out as not rows reelflow writes (storage/manifest-codec.ts): where, and why. */
export interface ManifestRead {
  rows: ManifestRow[];
  skipped: SkippedRow[];
}

export interface ManifestPage extends ManifestRead {
  fromStart: boolean;
  cursor: ManifestCursor | undefined;
}

/** Where videos land. One interface for local disk and S3-compatible buckets. */
export interface Storage {
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
  appendManifest(row: ManifestRow): Promise<void>;
  /** Manifest rows in order, and the lines that are not rows (a torn last line among them), skipped. */
  readManifest(): Promise<ManifestRead>;
  /**
   * The rows appended since `cursor`, and the cursor for next time. Without a cursor, or when
   * the manifest was replaced since (or the backend cannot tell), every row, with `fromStart`
   * set: what was read before must then be dropped.
   */
  readManifestSince(cursor: ManifestCursor | undefined): Promise<ManifestPage>;
  /**
   * Leaves the manifest as one `manifest.jsonl` at the output location, for people and tools that
   * read it whole (a job that ends calls it). Local: the file already is that, and is only read.
   * S3: one object of the latest row per item, rebuilt from the row objects.
   */
  snapshotManifest(): Promise<ManifestSnapshot>;
  list(): Promise<StoredObject[]>;
  /**
   * Writes one of reelflow's own small records beside the outputs (under `.reelflow/`, never listed
   * as an output; e.g. the prompt rewrites, docs/enhance.md): whole and atomically, the last write
   * of a name wins. `name` is relative, `/`-separated.
   */
  putRecord(name: string, text: string): Promise<void>;
  /** The record's text; undefined when there is none. A record larger than `maxBytes` is refused. */
  getRecord(name: string, maxBytes: number): Promise<string | undefined>;
  /** The names (as putRecord took them) of the records in the folder `folder` (`/`-separated), in name order; none when it is absent. */
  listRecords(folder: string): Promise<string[]>;
  /** Throws a StorageError with a clear message when the location cannot be written. */
  checkWritable(): Promise<void>;
  /**
   * The bytes `start`..`end` (inclusive) of a stored object, for `reelflow review`'s player when the
   * output is not a local directory (a local one is read through storage/safe-path.ts); undefined
   * when there is no such object.
   */
  readObject?(name: string, range: { start: number; end: number }): Promise<Readable | undefined>;
  /** Absolute local path of an object when the backend is a local directory (reports link to it). */
  localPath?(name: string): string;
}

export class StorageError extends Error {
  override readonly name = 'StorageError';
  /** Another attempt would meet the same cause (a planted link, a file reelflow must not replace). */
  readonly final: boolean = false;
}
