// Where a job's outputs live, as one object: the object store, the manifest log and the records,
// each with its own interface (objects/store.ts, manifest/log.ts, records/store.ts), one backend
// for local disk and one for S3-compatible buckets (local.ts, s3.ts; index.ts openStorage).
import type { ManifestLog } from './manifest/log';
import type { ObjectStore } from './objects/store';
import type { RecordStore } from './records/store';

export interface Storage extends ObjectStore, ManifestLog, RecordStore {}
