// Where videos land: `openStorage(plan.output)` picks the backend; both implement `Storage`.
import type { OutputSettings } from '../jobfile/plan';
import { LocalStorage } from './local';
import type { S3Storage as S3StorageClass, S3StorageOptions } from './s3';
import { StorageError } from './objects/errors';
import type { Storage } from './storage';

export function openStorage(settings: OutputSettings, s3Options?: S3StorageOptions): Storage {
  if (settings.storage === 's3') {
    if (!settings.s3) throw new StorageError('output.storage is s3 but output.s3 is missing');
    // Loaded on first use: the AWS SDK adds about 20 MiB to every worker, most of which write to disk.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { S3Storage } = require('./s3') as { S3Storage: typeof S3StorageClass };
    return new S3Storage(settings.s3, s3Options);
  }
  if (!settings.dir) throw new StorageError('output.storage is local but output.dir is missing');
  return new LocalStorage(settings.dir);
}

export { LocalStorage, hashFile } from './local';
// S3Storage itself: import it from './s3' (not re-exported, so that local-only users never load the AWS SDK).
export type { S3StorageOptions } from './s3';
export { SizeMismatchError, TooLargeError } from './objects/errors';
export { StorageError } from './objects/errors';
export type { Storage } from './storage';
export type { StoredObject, WriteOptions, WriteResult } from './objects/store';
export type { ManifestRow } from './manifest/row';
export type { ManifestSnapshot } from './manifest/log';
