// Where videos land: `openStorage(plan.output)` picks the backend; both implement `Storage`.
import type { OutputSettings } from '../jobfile/plan';
import { LocalStorage } from './local';
import { S3Storage, type S3StorageOptions } from './s3';
import { StorageError, type Storage } from './storage';

export function openStorage(settings: OutputSettings, s3Options?: S3StorageOptions): Storage {
  if (settings.storage === 's3') {
    if (!settings.s3) throw new StorageError('output.storage is s3 but output.s3 is missing');
    return new S3Storage(settings.s3, s3Options);
  }
  if (!settings.dir) throw new StorageError('output.storage is local but output.dir is missing');
  return new LocalStorage(settings.dir);
}

export { LocalStorage, hashFile } from './local';
export { S3Storage, type S3StorageOptions } from './s3';
export { SizeMismatchError } from './errors';
export { StorageError, type Storage, type StoredObject, type WriteOptions, type WriteResult } from './storage';
export type { ManifestRow, ItemEndState } from './manifest';
