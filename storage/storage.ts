import type { Readable } from 'node:stream';
import type { ManifestRow } from './manifest';
import type { ManifestSnapshot } from './manifest-snapshot';
import type { OutputOwner } from './owner';

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
}

declare const manifestCursor: unique symbol;

/** Where a reader of a manifest got to. Opaque: only the storage that made it looks inside. */
export type ManifestCursor = { readonly [manifestCursor]: true };

export interface ManifestPage {
  rows: ManifestRow[];
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
   * download can resume with Range; 0 when there is none or the backend cannot resume.
   */
  partialBytes(name: string): Promise<number>;
  /**
   * Streams `body` to `name` atomically: nothing appears under the final name unless every byte
   * arrived. When `resumeFrom` > 0 the body carries bytes from that offset and is appended to the
   * kept partial write (the sha256 still covers the whole object).
   */
  write(name: string, body: Readable, options?: WriteOptions & { resumeFrom?: number }): Promise<WriteResult>;
  /** Drops a kept partial write, e.g. when the server cannot resume it. */
  discardPartial(name: string): Promise<void>;
  appendManifest(row: ManifestRow): Promise<void>;
  /** Manifest rows in order; a torn last line is ignored. */
  readManifest(): Promise<ManifestRow[]>;
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
  /** Throws a StorageError with a clear message when the location cannot be written. */
  checkWritable(): Promise<void>;
  /** The job that owns the location, from its marker (storage/owner.ts); undefined when there is none. */
  readOwner(): Promise<OutputOwner | undefined>;
  /** Leaves the owner marker (storage/owner.ts claimOutput decides when). */
  writeOwner(owner: OutputOwner): Promise<void>;
  /** Absolute local path of an object when the backend is a local directory (reports link to it). */
  localPath?(name: string): string;
}

export class StorageError extends Error {
  override readonly name = 'StorageError';
}
