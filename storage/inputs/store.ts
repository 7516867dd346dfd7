// Opens the store a location names, and reads an index object from it.
import { DigestStream } from '../objects/digest';
import { TooLargeError } from '../objects/errors';
import { DirInputStore } from './local';
import { MAX_INDEX_BYTES, decodeInputIndex, type InputIndex, type InputLocation, type InputStore } from './refs';
import type { S3InputStore as S3InputStoreClass } from './s3';
import type { S3ClientOptions } from '../objects/s3-client';
import { StorageError } from '../objects/errors';

export function openInputStore(location: InputLocation, s3Options?: S3ClientOptions): InputStore {
  if (location.kind === 'dir') return new DirInputStore(location.dir);
  // Loaded on first use, as for output storage: the AWS SDK is for those who use S3.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { S3InputStore } = require('./s3') as { S3InputStore: typeof S3InputStoreClass };
  return new S3InputStore(location.s3, s3Options);
}

/** The index object `sha256` from `store`, bounded, verified and decoded. */
export async function readInputIndex(store: InputStore, sha256: string): Promise<InputIndex> {
  return decodeInputIndex(await readBounded(store, sha256, MAX_INDEX_BYTES), sha256, store.location);
}

async function readBounded(store: InputStore, sha256: string, maxBytes: number): Promise<Buffer> {
  const body = await store.get(sha256);
  const bounded = new DigestStream({ name: `the index of job inputs sha256:${sha256}`, maxBytes });
  body.once('error', (error) => bounded.destroy(error));
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of body.pipe(bounded) as AsyncIterable<Buffer>) chunks.push(chunk);
  } catch (error) {
    body.destroy();
    if (error instanceof TooLargeError) throw new StorageError(`${error.objectName} in ${store.location} is larger than ${maxBytes} bytes`);
    throw new StorageError(`cannot read sha256:${sha256} from ${store.location}: ${(error as Error).message}`, { cause: error });
  }
  return Buffer.concat(chunks);
}
