// Over 400 lines, for now: this one class is the S3 object store, manifest log and records at once
// (the Storage interface). Its manifest half (appendManifest to readManifestSince, the row cache and
// snapshot cache) is the part to lift into manifest/ next, once listKeys and headOrUndefined live in
// objects/ for both halves.
// S3-compatible bucket storage. Videos stream straight from the body into a multipart upload
// (parts of `partSize` are the only buffering), hashed on the way. A body that fails mid-way makes
// the upload abort, so no object appears; a process killed mid-way leaves only an incomplete
// multipart upload, which S3 never shows as an object, and the next complete write of that key
// aborts it.
//
// Where the sha256 lives: S3 takes user metadata when an upload starts, but the hash is known only
// at its end, and S3's own SHA256 checksum of a multipart object is a checksum of the part
// checksums, not of the object. Copying the object onto itself with new metadata was measured on
// MinIO: it rewrites the whole object (MinIO recomputes a full-object checksum on every copy, as
// AWS does), doubling the cost of each video, and CopyObject stops at 5 GiB. So a tiny sidecar
// object `<key>.sha256` (sha256sum format, usable with `sha256sum -c`) carries
// `x-amz-meta-sha256`, plus the size and ETag of the object it vouches for; stat() trusts it only
// while both still match. Without a valid sidecar (the process died between the two PUTs),
// stat() falls back to the manifest's latest succeeded row for that file.
//
// The manifest is one small object per row under `<prefix>manifest/`, named by time, so any number
// of workers on any machines append without read-modify-write races; readManifest() lists them
// in name order (time order, up to clock skew between machines). A job that ends leaves
// `<prefix>manifest.jsonl` beside them (snapshotManifest(), see manifest-snapshot.ts): the latest
// row of each item in one object, which readers take instead of the row objects it folds in.
import { randomBytes } from 'node:crypto';
import { finished, type Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { S3OutputSettings } from '../jobfile/plan';
import { DigestStream } from './objects/digest';
import { ForeignFileError } from './objects/errors';
import { S3_RESERVED_DIR } from './inputs/refs';
import type { ManifestRow } from './manifest/row';
import { decodeManifestRow, encodeManifestRow, parseManifest, type SkippedRow } from './manifest/codec';
import {
  byName,
  coverageFrom,
  coverageMetadata,
  coverageOf,
  rowNamesAfter,
  rowNamesToRead,
  snapshotLines,
  snapshotRows,
  type SnapshotCoverage,
} from './manifest/snapshot';
import { MANIFEST_FILE, contentTypeFor } from '../domain/output';
import { checkObjectName } from './objects/names';
import { createS3Client, type S3ClientOptions } from './objects/s3-client';
import { PartUploader } from './objects/s3-part-uploader';
import { describeS3Error, endpointLabel, isNotFound, type S3ErrorContext } from './objects/s3-errors';
import { mapLimit } from './objects/map-limit';
import { StorageError } from './objects/errors';
import type { ManifestCursor, ManifestPage, ManifestRead, ManifestSnapshot } from './manifest/log';
import { ManifestDigestIndex } from './manifest/digests';
import type { Storage } from './storage';
import type { StoredObject, WriteOptions, WriteResult } from './objects/store';

/** Suffix of the sidecar object that records a video's sha256. */
export const SHA256_SIDECAR = '.sha256';
const MANIFEST_DIR = 'manifest/';
const PROBE_PREFIX = '.reelflow-write-check-';

/** The one S3 client construction (s3-client.ts): output storage and the job-inputs store share it. */
export { createS3Client, type S3ClientOptions } from './objects/s3-client';

export interface S3StorageOptions extends S3ClientOptions {
  /**
   * Multipart part size in bytes (default 16 MiB, at least 5 MiB); a write holds at most
   * partSize x (queueSize + 1) bytes of parts: 64 MiB by default, whatever the object's size.
   * Against MinIO on loopback 16 MiB parts beat 8 MiB ones by 5 to 10 % (fewer requests, fewer
   * per-part fdatasyncs on the server).
   */
  partSize?: number;
  /** Parts uploaded concurrently (default 3). */
  queueSize?: number;
}

/** The manifest snapshot as last read, kept while its ETag is unchanged. */
interface CachedSnapshot {
  etag: string | undefined;
  rows: ManifestRow[];
  skipped: SkippedRow[];
  coverage: SnapshotCoverage | undefined;
}

export class S3Storage implements Storage {
  readonly location: string;
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly where: string;
  private readonly partSize: number;
  private readonly queueSize: number;
  /** Manifest row objects never change once written: cache them by key (null: gone; a problem: not a row). */
  private readonly rowCache = new Map<string, ManifestRow | { problem: string } | null>();
  private snapshotCache: CachedSnapshot | undefined;
  private manifestSeq = 0;
  /** sha256 per file from the manifest, for videos without a sidecar; read from a cursor. */
  private readonly digests = new ManifestDigestIndex((cursor) => this.readManifestSince(cursor));

  constructor(
    private readonly settings: S3OutputSettings,
    options: S3StorageOptions = {},
  ) {
    this.bucket = settings.bucket;
    this.prefix = settings.prefix;
    this.location = `s3://${settings.bucket}/${settings.prefix}`;
    this.where = endpointLabel(settings);
    this.partSize = options.partSize ?? 16 * 1024 * 1024;
    this.queueSize = options.queueSize ?? 3;
    this.client = createS3Client(settings, options);
  }

  private key(name: string): string {
    if (checkObjectName(name).endsWith(SHA256_SIDECAR) || name.startsWith(MANIFEST_DIR) || name.startsWith(S3_RESERVED_DIR)) {
      throw new StorageError(`invalid output name ${JSON.stringify(name)}: reserved for reelflow's own objects in S3`);
    }
    return this.prefix + name;
  }

  async stat(name: string): Promise<StoredObject | undefined> {
    const Key = this.key(name);
    const context = { action: `stat s3://${this.bucket}/${Key}`, bucket: this.bucket, where: this.where };
    const [head, sidecar] = await Promise.all([this.headOrUndefined(Key, context), this.headOrUndefined(Key + SHA256_SIDECAR, context)]);
    if (!head) return undefined;
    const bytes = head.ContentLength ?? 0;
    const vouched = sidecar?.Metadata;
    const sidecarSha =
      vouched?.sha256 && vouched.bytes === String(bytes) && (!vouched.etag || vouched.etag === head.ETag) ? vouched.sha256 : undefined;
    const sha256 = sidecarSha ?? (await this.manifestSha256(name, bytes));
    return { name, bytes, sha256 };
  }

  private async headOrUndefined(Key: string, context: S3ErrorContext) {
    try {
      return await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw describeS3Error(err, context);
    }
  }

  /** S3 keeps no partial objects (an interrupted upload is aborted), so there is nothing to resume. */
  partialBytes(_name: string): Promise<number> {
    return Promise.resolve(0);
  }

  /**
   * Aborts multipart uploads of this key left behind by a process that died mid-upload (S3 keeps,
   * and bills, their parts until then). write() calls it after each complete multipart write; an
   * attempt still uploading the same key then (a zombie one) fails, and the newer object stays.
   */
  async discardPartial(name: string): Promise<void> {
    const Key = this.key(name);
    try {
      const found = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: Key }));
      for (const upload of found.Uploads ?? []) {
        if (upload.Key === Key && upload.UploadId) {
          await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: upload.UploadId }));
        }
      }
    } catch (err) {
      throw describeS3Error(err, {
        action: `discard partial uploads of s3://${this.bucket}/${Key}`,
        bucket: this.bucket,
        where: this.where,
      });
    }
  }

  async write(name: string, body: Readable, options: WriteOptions & { resumeFrom?: number } = {}): Promise<WriteResult> {
    const Key = this.key(name);
    if ((options.resumeFrom ?? 0) > 0) {
      body.destroy();
      throw new StorageError(`${this.location}${name}: S3 storage cannot resume a partial write (partialBytes() is 0); start from byte 0`);
    }
    if (!options.overwrite) {
      try {
        await this.refuseForeign(name, Key);
      } catch (err) {
        body.destroy();
        throw err;
      }
    }
    const digest = new DigestStream({
      name,
      expectedBytes: options.expectedBytes,
      maxBytes: options.maxBytes,
      onProgress: options.onProgress,
      passChunks: true,
    });
    // Errors do not cross pipe(): a body that fails (or closes early) destroys the digest, which
    // fails the upload's read of it, and the upload aborts.
    let bodyError: unknown;
    finished(body, (err) => {
      if (!err) return;
      bodyError ??= err;
      digest.destroy(err);
    });
    body.pipe(digest);
    const uploader = new PartUploader(
      this.client,
      { Bucket: this.bucket, Key, ContentType: contentTypeFor(name) },
      this.partSize,
      this.queueSize,
    );
    let etag: string | undefined;
    // The object always starts at byte 0 here: its first bytes are checked before it is committed.
    const head: Buffer[] = [];
    let headBytes = 0;
    let startRefused: unknown;
    try {
      for await (const chunk of digest as AsyncIterable<Buffer>) {
        if (options.checkStart && headBytes < options.checkStart.bytes) {
          head.push(chunk.subarray(0, options.checkStart.bytes - headBytes));
          headBytes += head.at(-1)!.length;
        }
        await uploader.add(chunk);
      }
      try {
        options.checkStart?.check(Buffer.concat(head));
      } catch (err) {
        throw (startRefused = err);
      }
      etag = await uploader.finish();
    } catch (err) {
      // Decided before destroying the body, whose own close would then count as a body error.
      const cause =
        digest.sizeError && err === digest.sizeError
          ? digest.sizeError
          : bodyError !== undefined
            ? bodyError
            : err === startRefused
              ? err
              : describeS3Error(err, { action: `upload s3://${this.bucket}/${Key}`, bucket: this.bucket, where: this.where });
      body.unpipe(digest);
      body.destroy();
      digest.destroy();
      await uploader.abort().catch(() => undefined);
      throw cause;
    }
    const sha256 = digest.sha256;
    await this.putSidecar(Key, sha256, digest.bytes, etag);
    // Parts left by a killed earlier attempt: only a multipart write looks for them, since a retry
    // of the same video has the same size, and one small enough for a single PUT never had parts.
    if (uploader.multipart) await this.discardPartial(name).catch(() => undefined);
    return { name, bytes: digest.bytes, sha256, location: `s3://${this.bucket}/${Key}` };
  }

  /**
   * An object already under the key is replaced only when reelflow wrote it: its sidecar vouches
   * for it (reelflow alone writes those), or a manifest row names it with its size and digest.
   */
  private async refuseForeign(name: string, Key: string): Promise<void> {
    const existing = await this.stat(name);
    if (!existing) return;
    const recorded = await this.manifestSha256(name, existing.bytes);
    if (existing.sha256 !== undefined && (recorded === undefined || recorded === existing.sha256)) return;
    throw new ForeignFileError(`s3://${this.bucket}/${Key}`);
  }

  /** Records the sha256 beside the object (see the top of this file for why not on it). */
  private async putSidecar(Key: string, sha256: string, bytes: number, etag: string | undefined): Promise<void> {
    const base = Key.slice(Key.lastIndexOf('/') + 1);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: Key + SHA256_SIDECAR,
          Body: `${sha256}  ${base}\n`,
          ContentType: 'text/plain; charset=utf-8',
          Metadata: { sha256, bytes: String(bytes), ...(etag ? { etag } : {}) },
        }),
      );
    } catch {
      // Best effort: the object is complete and correct, the WriteResult (and so the manifest row)
      // carries the sha256, and stat() falls back to the manifest.
    }
  }

  async appendManifest(row: ManifestRow): Promise<void> {
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('.', '');
    const seq = String(this.manifestSeq++).padStart(6, '0');
    const Key = `${this.prefix}${MANIFEST_DIR}${stamp}-${seq}-${randomBytes(4).toString('hex')}.json`;
    try {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key, Body: encodeManifestRow(row), ContentType: 'application/x-ndjson' }),
      );
    } catch (err) {
      throw describeS3Error(err, { action: `append a manifest row at s3://${this.bucket}/${Key}`, bucket: this.bucket, where: this.where });
    }
    this.rowCache.set(Key, row);
  }

  async readManifest(): Promise<ManifestRead> {
    const { rows, skipped } = await this.readRows();
    return { rows, skipped };
  }

  /**
   * Leaves `manifest.jsonl` at the prefix: the latest row of each item, in the local manifest's
   * format, so `aws s3 cp` gets the whole outcome of a job. Built from the previous snapshot and
   * the row objects since, so rebuilding it costs the rows appended since the last one. One
   * PutObject (or a multipart upload for a large one): readers see the old one or the new one whole.
   */
  async snapshotManifest(): Promise<ManifestSnapshot> {
    const { rows, listed } = await this.readRows();
    const latest = snapshotRows(rows);
    const Key = this.prefix + MANIFEST_FILE;
    const coverage = coverageOf(listed);
    const target = { Bucket: this.bucket, Key, ContentType: 'application/x-ndjson', Metadata: coverageMetadata(coverage) };
    const uploader = new PartUploader(this.client, target, this.partSize, this.queueSize);
    try {
      for (const line of snapshotLines(latest)) await uploader.add(line);
      await uploader.finish();
    } catch (err) {
      await uploader.abort().catch(() => undefined);
      throw describeS3Error(err, { action: `write the manifest s3://${this.bucket}/${Key}`, bucket: this.bucket, where: this.where });
    }
    return { location: `s3://${this.bucket}/${Key}`, items: latest.length };
  }

  /**
   * The snapshot's rows, then the row objects it does not fold in (all of them when it cannot prove
   * which it folds in), in name order; and the names of all row objects listed. The snapshot is
   * read before the listing, which is what makes its coverage checkable (manifest-snapshot.ts).
   */
  private async readRows(): Promise<ManifestRead & { listed: string[] }> {
    const snapshot = await this.readSnapshot();
    const listed = await this.listRowNames();
    const read = await this.fetchRows(rowNamesToRead(listed, snapshot?.coverage));
    return { rows: [...(snapshot?.rows ?? []), ...read.rows], skipped: [...(snapshot?.skipped ?? []), ...read.skipped], listed };
  }

  /** The names (under the manifest folder) of every row object, in name order. */
  private async listRowNames(): Promise<string[]> {
    const manifestDir = this.prefix + MANIFEST_DIR;
    return (await this.listKeys(manifestDir)).map((o) => o.key.slice(manifestDir.length)).sort(byName);
  }

  /** The rows of the row objects `names`, in that order, each fetched once (row objects never change). */
  private async fetchRows(names: readonly string[]): Promise<ManifestRead> {
    const keys = names.map((name) => this.prefix + MANIFEST_DIR + name);
    const missing = keys.filter((k) => !this.rowCache.has(k));
    await mapLimit(missing, 16, async (Key) => {
      this.rowCache.set(Key, await this.getRow(Key));
    });
    const rows: ManifestRow[] = [];
    const skipped: SkippedRow[] = [];
    for (const k of keys) {
      const row = this.rowCache.get(k);
      if (row && 'problem' in row) skipped.push({ where: `s3://${this.bucket}/${k}`, problem: row.problem });
      else if (row) rows.push(row);
    }
    return { rows, skipped };
  }

  /** The current `manifest.jsonl`, fetched again only when its ETag changed; undefined while there is none. */
  private async readSnapshot(): Promise<CachedSnapshot | undefined> {
    const Key = this.prefix + MANIFEST_FILE;
    const context = { action: `read s3://${this.bucket}/${Key}`, bucket: this.bucket, where: this.where };
    const head = await this.headOrUndefined(Key, context);
    if (!head) return (this.snapshotCache = undefined);
    if (head.ETag !== undefined && this.snapshotCache?.etag === head.ETag) return this.snapshotCache;
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key }));
      const bytes = Buffer.from((await got.Body?.transformToByteArray()) ?? []);
      const { rows, skipped } = parseManifest(bytes, { file: `s3://${this.bucket}/${Key}`, firstLine: 1 });
      this.snapshotCache = { etag: got.ETag, rows, skipped, coverage: coverageFrom(got.Metadata) };
      return this.snapshotCache;
    } catch (err) {
      if (isNotFound(err)) return (this.snapshotCache = undefined);
      throw describeS3Error(err, context);
    }
  }

  /**
   * The cursor is the coverage of the listing read last (its last name and how many it held): the
   * row objects after it are the new ones when exactly as many still sort up to that name (rows are
   * never removed). Another machine's clock can name a row before it, and then every row is read
   * again, `fromStart` (manifest-snapshot.ts rowNamesAfter). A snapshot written since changes
   * nothing: the row objects stay the truth, so going on from a cursor never fetches it.
   */
  async readManifestSince(cursor: ManifestCursor | undefined): Promise<ManifestPage> {
    const at = cursor as unknown as SnapshotCoverage | undefined;
    if (at !== undefined) {
      const listed = await this.listRowNames();
      const after = rowNamesAfter(listed, at);
      if (after !== undefined) return { ...(await this.fetchRows(after)), fromStart: false, cursor: cursorAfter(listed) };
    }
    const { rows, skipped, listed } = await this.readRows();
    return { rows, skipped, fromStart: true, cursor: cursorAfter(listed) };
  }

  /** Finished objects under the prefix (not the manifest, sidecars or probes). sha256 is left to stat(). */
  async list(): Promise<StoredObject[]> {
    const manifestDir = this.prefix + MANIFEST_DIR;
    const snapshot = this.prefix + MANIFEST_FILE;
    return (await this.listKeys(this.prefix))
      .filter((o) => !o.key.startsWith(manifestDir) && o.key !== snapshot && !o.key.endsWith(SHA256_SIDECAR))
      .map((o) => ({ name: o.key.slice(this.prefix.length), bytes: o.bytes }))
      .filter((o) => !o.name.split('/').some((segment) => segment.startsWith('.')));
  }

  /** Writes and deletes a tiny probe object; says which of bucket, credentials or endpoint is wrong. */
  async checkWritable(): Promise<void> {
    const Key = `${this.prefix}${PROBE_PREFIX}${randomBytes(6).toString('hex')}`;
    const context = { action: `write to ${this.location}`, bucket: this.bucket, where: this.where };
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: 'ok\n' }));
    } catch (err) {
      throw describeS3Error(err, context);
    }
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key }));
    } catch (err) {
      throw describeS3Error(err, { ...context, action: `delete the probe object s3://${this.bucket}/${Key}` });
    }
  }

  /** One PutObject: S3 shows the old record or the new one whole. */
  async putRecord(name: string, text: string): Promise<void> {
    const Key = this.prefix + S3_RESERVED_DIR + checkObjectName(name);
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: text, ContentType: 'application/json' }));
    } catch (err) {
      throw describeS3Error(err, { action: `write s3://${this.bucket}/${Key}`, bucket: this.bucket, where: this.where });
    }
  }

  async readObject(name: string, range: { start: number; end: number }): Promise<Readable | undefined> {
    const Key = this.key(name);
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key, Range: `bytes=${range.start}-${range.end}` }));
      return got.Body as Readable | undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw describeS3Error(err, { action: `read s3://${this.bucket}/${Key}`, bucket: this.bucket, where: this.where });
    }
  }

  async getRecord(name: string, maxBytes: number): Promise<string | undefined> {
    const Key = this.prefix + S3_RESERVED_DIR + checkObjectName(name);
    const context = { action: `read s3://${this.bucket}/${Key}`, bucket: this.bucket, where: this.where };
    let got;
    try {
      got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw describeS3Error(err, context);
    }
    if ((got.ContentLength ?? 0) > maxBytes) {
      got.Body?.transformToWebStream()
        .cancel()
        .catch(() => undefined);
      throw new StorageError(
        `s3://${this.bucket}/${Key} holds ${got.ContentLength} bytes, more than a record may (${maxBytes}): remove it`,
      );
    }
    try {
      const text = (await got.Body?.transformToString('utf8')) ?? '';
      if (Buffer.byteLength(text) > maxBytes)
        throw new StorageError(`s3://${this.bucket}/${Key} is larger than a record may be (${maxBytes} bytes)`);
      return text;
    } catch (err) {
      throw err instanceof StorageError ? err : describeS3Error(err, context);
    }
  }

  async listRecords(folder: string): Promise<string[]> {
    const base = this.prefix + S3_RESERVED_DIR;
    return (await this.listKeys(`${base}${checkObjectName(folder)}/`)).map((o) => o.key.slice(base.length)).sort();
  }

  private async getRow(Key: string): Promise<ManifestRow | { problem: string } | null> {
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key }));
      const text = (await got.Body?.transformToString('utf8')) ?? '';
      const decoded = decodeManifestRow(text.trim());
      return 'row' in decoded ? decoded.row : decoded;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw describeS3Error(err, { action: `read s3://${this.bucket}/${Key}`, bucket: this.bucket, where: this.where });
    }
  }

  private async listKeys(Prefix: string): Promise<{ key: string; bytes: number }[]> {
    const out: { key: string; bytes: number }[] = [];
    let ContinuationToken: string | undefined;
    try {
      do {
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix, ContinuationToken }));
        for (const o of page.Contents ?? []) if (o.Key !== undefined) out.push({ key: o.Key, bytes: o.Size ?? 0 });
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    } catch (err) {
      throw describeS3Error(err, { action: `list s3://${this.bucket}/${Prefix}`, bucket: this.bucket, where: this.where });
    }
    return out;
  }

  private manifestSha256(name: string, bytes: number): Promise<string | undefined> {
    return this.digests.lookup([name, `s3://${this.bucket}/${this.prefix}${name}`], bytes);
  }
}

/** A reader's cursor after reading a listing of the row objects (readManifestSince). */
function cursorAfter(listed: readonly string[]): ManifestCursor {
  return coverageOf(listed) as unknown as ManifestCursor;
}
