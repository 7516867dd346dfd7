// Job inputs in S3: beside the job's S3 outputs (`<prefix>.reelflow/inputs/sha256/<hex>`) or
// under a prefix the user names. Uploads go through the same client construction and part
// uploader as videos; the sha256 is checked before an upload is committed, so an object under a
// digest's name always has that digest (short of someone overwriting it: workers check again).
import type { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { S3OutputSettings } from '../../jobfile/plan';
import { DigestStream } from '../objects/digest';
import { SizeMismatchError } from '../objects/errors';
import { InputDigestError, InputMissingError, checkDigest, type InputStore } from './refs';
import { createS3Client, type S3ClientOptions } from '../objects/s3-client';
import { describeS3Error, endpointLabel, isNotFound } from '../objects/s3-errors';
import { PartUploader } from '../objects/s3-part-uploader';
import { StorageError } from '../objects/errors';

/** Above this many digests, one listing of the prefix is cheaper than a HEAD each. */
const LIST_ABOVE = 20;
const PART_SIZE = 16 * 1024 * 1024;
const QUEUE_SIZE = 2;

export class S3InputStore implements InputStore {
  readonly location: string;
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly objects: string;
  private readonly where: string;

  constructor(settings: S3OutputSettings, options: S3ClientOptions = {}) {
    this.bucket = settings.bucket;
    this.objects = `${settings.prefix}sha256/`;
    this.location = `s3://${settings.bucket}/${settings.prefix}`;
    this.where = endpointLabel(settings);
    this.client = createS3Client(settings, options);
  }

  private key(sha256: string): string {
    return this.objects + checkDigest(sha256);
  }

  private failure(error: unknown, action: string): StorageError {
    return describeS3Error(error, { action, bucket: this.bucket, where: this.where });
  }

  async missing(digests: readonly string[]): Promise<Set<string>> {
    const wanted = new Set(digests.map(checkDigest));
    if (wanted.size > LIST_ABOVE) {
      for (const sha256 of await this.listed()) wanted.delete(sha256);
      return wanted;
    }
    const missing = new Set<string>();
    for (const sha256 of wanted) {
      try {
        await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(sha256) }));
      } catch (error) {
        if (!isNotFound(error)) throw this.failure(error, `read ${this.location}`);
        missing.add(sha256);
      }
    }
    return missing;
  }

  private async listed(): Promise<Set<string>> {
    const found = new Set<string>();
    let ContinuationToken: string | undefined;
    try {
      do {
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.objects, ContinuationToken }));
        for (const o of page.Contents ?? []) if (o.Key) found.add(o.Key.slice(this.objects.length));
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    } catch (error) {
      throw this.failure(error, `list ${this.location}`);
    }
    return found;
  }

  async put(sha256: string, bytes: number, openBody: () => Readable): Promise<void> {
    const Key = this.key(sha256);
    const body = openBody();
    const digest = new DigestStream({ name: `job input sha256:${sha256}`, expectedBytes: bytes, passChunks: true });
    const uploader = new PartUploader(
      this.client,
      { Bucket: this.bucket, Key, ContentType: 'application/octet-stream' },
      PART_SIZE,
      QUEUE_SIZE,
    );
    body.once('error', (error) => digest.destroy(error));
    body.pipe(digest);
    try {
      for await (const chunk of digest as AsyncIterable<Buffer>) await uploader.add(chunk);
      // Checked before the commit: bytes that are not what their name says are never stored.
      if (digest.sha256 !== sha256) throw new InputDigestError(sha256, `sha256:${digest.sha256}`, this.location);
      await uploader.finish();
    } catch (error) {
      body.destroy();
      await uploader.abort().catch(() => undefined);
      if (error instanceof SizeMismatchError)
        throw new InputDigestError(sha256, `${error.received} bytes instead of ${error.expected}`, this.location);
      if (error instanceof StorageError) throw error;
      throw this.failure(error, `upload to ${this.location}`);
    }
  }

  async get(sha256: string): Promise<Readable> {
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(sha256) }));
      if (!got.Body) throw new StorageError(`job input sha256:${sha256} in ${this.location} came back without a body`);
      return got.Body as Readable;
    } catch (error) {
      if (isNotFound(error)) throw new InputMissingError(sha256, this.location);
      throw this.failure(error, `read ${this.location}`);
    }
  }
}
