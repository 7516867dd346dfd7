// Job inputs in a directory every worker mounts (`--inputs /shared/reelflow-inputs`): one file per
// input at `<dir>/sha256/<hex>`. Also the verified write that the worker's cache uses: a file
// appears under its digest's name only once its bytes have that digest. Neither writes through a
// link under its directory (safe-path.ts).
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DigestStream } from '../objects/digest';
import { SizeMismatchError, TooLargeError, errnoCode, errorMessage } from '../objects/errors';
import { InputDigestError, InputMissingError, checkDigest, type InputStore } from './refs';
import { openUnder, pathUnder, renameUnder } from '../objects/safe-path';
import { StorageError } from '../objects/errors';

export interface VerifiedWrite {
  /** The directory written under (the cache's, the store's): nothing below it is followed. */
  root: string;
  /** The final name under `root` (`/`-separated); written through a temporary file beside it, renamed once verified. */
  name: string;
  sha256: string;
  /** Exact size when known (index entries); else only `maxBytes` bounds it. */
  bytes?: number;
  maxBytes?: number;
  /** Where the bytes come from, for messages (a directory, an s3:// location). */
  from: string;
  what?: string;
  onProgress?: (bytesSoFar: number) => void;
}

/**
 * Streams `body` into `path`, hashing on the way. Too many or too few bytes, or another digest,
 * and nothing appears under `path` (InputDigestError, or a size error naming the digest). Two
 * writers of the same digest race harmlessly: each renames identical verified bytes.
 */
export async function writeVerified(body: Readable, target: VerifiedWrite): Promise<void> {
  const { root, name, sha256, from } = target;
  const path = pathUnder(root, name);
  const what = target.what ?? 'job input';
  const temporary = `${name}.${randomBytes(6).toString('hex')}.tmp`;
  const digest = new DigestStream({
    name: `${what} sha256:${sha256}`,
    expectedBytes: target.bytes,
    maxBytes: target.maxBytes,
    onProgress: target.onProgress,
  });
  try {
    const handle = await openUnder(root, temporary, 'create');
    try {
      await pipeline(body, digest, async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) {
          for (let at = 0; at < chunk.length;) at += (await handle.write(chunk, at)).bytesWritten;
        }
      });
      if (digest.sha256 !== sha256) throw new InputDigestError(sha256, `sha256:${digest.sha256}`, from, what);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await renameUnder(root, temporary, name);
  } catch (error) {
    body.destroy();
    await rm(pathUnder(root, temporary), { force: true });
    if (error instanceof SizeMismatchError)
      throw new InputDigestError(sha256, `${error.received} bytes instead of ${error.expected}`, from, what);
    if (error instanceof TooLargeError) throw new InputDigestError(sha256, `more than ${error.maxBytes} bytes`, from, what);
    if (error instanceof StorageError) throw error;
    throw new StorageError(`cannot store ${what} sha256:${sha256} at ${path}: ${errorMessage(error)}`, { cause: error });
  }
}

/** A shared directory of job inputs, `<dir>/sha256/<hex>`. */
export class DirInputStore implements InputStore {
  readonly location: string;

  constructor(private readonly dir: string) {
    this.location = dir;
  }

  private path(sha256: string): string {
    return join(this.dir, 'sha256', checkDigest(sha256));
  }

  async missing(digests: readonly string[]): Promise<Set<string>> {
    const missing = new Set<string>();
    for (const sha256 of new Set(digests)) {
      const found = await stat(this.path(sha256)).then(
        (st) => st.isFile(),
        (error: unknown) => {
          if (errnoCode(error) === 'ENOENT') return false;
          throw new StorageError(`cannot read the inputs directory ${this.dir}: ${errorMessage(error)}`);
        },
      );
      if (!found) missing.add(sha256);
    }
    return missing;
  }

  async put(sha256: string, bytes: number, openBody: () => Readable): Promise<void> {
    await writeVerified(openBody(), { root: this.dir, name: `sha256/${checkDigest(sha256)}`, sha256, bytes, from: this.dir });
  }

  async get(sha256: string): Promise<Readable> {
    const path = this.path(sha256);
    const stream = createReadStream(path, { highWaterMark: 1 << 20 });
    // Opening fails asynchronously: wait for it, so a missing object is this call's error.
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    }).catch((error: unknown) => {
      if (errnoCode(error) === 'ENOENT') throw new InputMissingError(sha256, this.dir);
      throw new StorageError(`cannot read job input sha256:${sha256} in ${this.dir}: ${errorMessage(error)}`);
    });
    return stream;
  }
}
