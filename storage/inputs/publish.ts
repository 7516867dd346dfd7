// The submitter's side of the claim check: what a job reads (the job file and items_from text as
// the loader read them, the local references its plan names), hashed into an index, and stored
// where its workers read them. Only what the store lacks is uploaded, the index last, so an index
// in the store means every file it names was stored before it.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { nodeFiles, type FileAccess } from '../../jobfile/context';
import type { Plan } from '../../jobfile/plan';
import { hashFilePrefix } from '../objects/digest';
import { errorMessage } from '../objects/errors';
import {
  InputDigestError,
  encodeInputIndex,
  type InputEntry,
  type InputIndex,
  type InputLocation,
  type InputStore,
  type InputsRef,
} from './refs';
import { openInputStore } from './store';
import { StorageError } from '../objects/errors';

/** A FileAccess that keeps the text of every file the loader reads (the job file, items_from). */
export interface RecordingFiles extends FileAccess {
  readonly texts: ReadonlyMap<string, string>;
}

export function recordingFiles(base: FileAccess = nodeFiles): RecordingFiles {
  const texts = new Map<string, string>();
  return {
    texts,
    isFile: (path) => base.isFile(path),
    realPath: (path) => base.realPath(path),
    readText(path) {
      const text = base.readText(path);
      if (typeof text === 'string') texts.set(path, text);
      return text;
    },
  };
}

/** A job's inputs, hashed and indexed; nothing stored yet. */
export interface JobInputs {
  /** sha256 of `indexBytes`: what the job carries. */
  digest: string;
  indexBytes: Buffer;
  files: ReadonlyMap<string, InputEntry>;
  /** The texts exactly as the loader read them, by path. */
  texts: ReadonlyMap<string, string>;
}

/** How many reference files are hashed at once. */
const HASH_CONCURRENCY = 4;

/**
 * Hashes the plan's inputs: the texts the loader read (so what is stored is what was validated)
 * and each local reference file, once per path however many items name it.
 */
export async function hashJobInputs(plan: Pick<Plan, 'jobFile' | 'items'>, texts: ReadonlyMap<string, string>): Promise<JobInputs> {
  const files = new Map<string, InputEntry>();
  for (const [path, text] of texts) {
    const bytes = Buffer.from(text, 'utf8');
    files.set(path, { sha256: sha256Of(bytes), bytes: bytes.length, text: true });
  }
  if (!texts.has(plan.jobFile)) throw new StorageError(`${plan.jobFile}: the job file was not read through the recording file access`);
  const references = new Set<string>();
  for (const item of plan.items)
    for (const ref of item.request.references) if (ref.local && !files.has(ref.source)) references.add(ref.source);
  const queue = [...references];
  const hashOne = async () => {
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) files.set(path, await hashReference(path));
  };
  await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, queue.length) }, hashOne));
  const indexBytes = encodeInputIndex(plan.jobFile, files);
  return { digest: sha256Of(indexBytes), indexBytes, files, texts };
}

async function hashReference(path: string): Promise<InputEntry> {
  try {
    const { size } = await stat(path);
    return { sha256: (await hashFilePrefix(path, size)).digest('hex'), bytes: size };
  } catch (error) {
    throw new StorageError(`reference file ${path} cannot be read to store it for the workers: ${errorMessage(error)}`);
  }
}

function sha256Of(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export interface Published {
  /** Files the job reads (the index not counted). */
  files: number;
  /** Of those, and the index, how many were uploaded now (the rest were already stored). */
  uploaded: number;
  uploadedBytes: number;
}

/** Stores whatever of `inputs` the store lacks, the index last. */
export async function publishJobInputs(store: InputStore, inputs: JobInputs): Promise<Published> {
  const byDigest = new Map<string, { path: string; entry: InputEntry }>();
  for (const [path, entry] of inputs.files) if (!byDigest.has(entry.sha256)) byDigest.set(entry.sha256, { path, entry });
  const missing = await store.missing([...byDigest.keys(), inputs.digest]);
  let uploaded = 0;
  let uploadedBytes = 0;
  for (const [sha256, { path, entry }] of byDigest) {
    if (!missing.has(sha256)) continue;
    const text = inputs.texts.get(path);
    const open = () =>
      text !== undefined ? Readable.from([Buffer.from(text, 'utf8')]) : createReadStream(path, { highWaterMark: 1 << 20 });
    try {
      await store.put(sha256, entry.bytes, open);
    } catch (error) {
      if (error instanceof InputDigestError) {
        throw new StorageError(`${path} changed while it was being stored for the workers: run the command again`, { cause: error });
      }
      throw error;
    }
    uploaded += 1;
    uploadedBytes += entry.bytes;
  }
  if (missing.has(inputs.digest)) {
    await store.put(inputs.digest, inputs.indexBytes.length, () => Readable.from([inputs.indexBytes]));
    uploaded += 1;
    uploadedBytes += inputs.indexBytes.length;
  }
  return { files: inputs.files.size, uploaded, uploadedBytes };
}

/** Paths whose content differs between two indexes (added, removed or changed), sorted. */
export function changedPaths(before: InputIndex, after: ReadonlyMap<string, InputEntry>): string[] {
  const changed = new Set<string>();
  for (const [path, entry] of Object.entries(before.files)) if (after.get(path)?.sha256 !== entry.sha256) changed.add(path);
  for (const path of after.keys()) if (!(path in before.files)) changed.add(path);
  return [...changed].sort();
}

/** What `run` and `schedule apply` store for a job, and where. */
export interface StoredJobInputs {
  ref: InputsRef;
  inputs: JobInputs;
  published: Published;
  /** The store's location for people. */
  where: string;
}

/** Stores the plan's inputs at `location` (see inputLocationFor): hashed, then only what is missing uploaded. */
export async function storeJobInputs(
  plan: Pick<Plan, 'jobFile' | 'items'>,
  texts: ReadonlyMap<string, string>,
  location: InputLocation,
): Promise<StoredJobInputs> {
  const inputs = await hashJobInputs(plan, texts);
  const store = openInputStore(location);
  const published = await publishJobInputs(store, inputs);
  return { ref: { location, index: inputs.digest }, inputs, published, where: store.location };
}
