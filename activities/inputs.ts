// A worker's view of a job's stored inputs (storage/inputs/refs.ts): the job file loader's FileAccess
// over the fetched copies (original paths in every message), and local references resolved to
// their verified cached copies before the gateway client reads them. Jobs that carry no inputs
// (local output, no location named, or started before inputs were stored) read their paths as before.
import { realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { FileAccess } from '../jobfile/context';
import type { JobSettings, ReferenceAsset, RenderRequest } from '../jobfile/plan';
import { InputCache, defaultInputCacheDir } from '../storage/inputs/cache';
import {
  InputDigestError,
  InputMissingError,
  type InputIndex,
  type InputLocation,
  type InputStore,
  type InputsRef,
} from '../storage/inputs/refs';
import { openInputStore, readInputIndex } from '../storage/inputs/store';
import { FailureType } from '../domain/failures';
import { finalFailure } from './failures';

/**
 * Job settings as the job's workflows carry them: plus where the job's inputs are, when stored, and
 * the fingerprint of the starter's key, when it had one (activities/key-fingerprint.ts).
 */
export type JobSettingsWithInputs = JobSettings & { inputs?: InputsRef; keyFingerprint?: string; jobFile?: string };

const stores = new Map<string, InputStore>();
/** Index objects by digest; a worker serves a few jobs at a time, so a few are kept. */
const indexes = new Map<string, Promise<InputIndex>>();
const KEPT_INDEXES = 4;
let cache: InputCache | undefined;

export function inputCache(): InputCache {
  return (cache ??= new InputCache(defaultInputCacheDir()));
}

function storeFor(ref: InputsRef): InputStore {
  return inputStoreAt(ref.location);
}

/** The content-addressed store at `location`, opened once per worker. */
export function inputStoreAt(location: InputLocation): InputStore {
  const key = JSON.stringify(location);
  let store = stores.get(key);
  if (!store) {
    store = openInputStore(location);
    stores.set(key, store);
  }
  return store;
}

function indexOf(ref: InputsRef): Promise<InputIndex> {
  let index = indexes.get(ref.index);
  if (!index) {
    index = readInputIndex(storeFor(ref), ref.index);
    // A failed read is not kept: the next call tries again.
    index.catch(() => indexes.delete(ref.index));
    indexes.set(ref.index, index);
    if (indexes.size > KEPT_INDEXES) indexes.delete(indexes.keys().next().value as string);
  }
  return index;
}

/**
 * The job's stored files as the loader's FileAccess: the index answers which files exist, the
 * texts (job file, items_from) are fetched and verified first. References are only named here;
 * they are fetched by the create that sends them.
 */
export async function storedJobFiles(
  ref: InputsRef,
): Promise<{ jobFile: string; files: FileAccess; sha256: (path: string) => string | undefined }> {
  const store = storeFor(ref);
  const index = await indexOf(ref);
  const texts = new Map<string, string>();
  for (const [path, entry] of Object.entries(index.files)) {
    if (entry.text) texts.set(path, await inputCache().text(store, entry));
  }
  const jobDir = dirname(index.jobFile);
  const files: FileAccess = {
    isFile: (path) => Object.hasOwn(index.files, path),
    // Links were followed on the submitter, where the read scope was checked against the real paths.
    realPath: (path) => (Object.hasOwn(index.files, path) || path === jobDir ? path : undefined),
    readText: (path) => texts.get(path) ?? new Error(`not among the job's stored inputs (${store.location})`),
    size: (path) => index.files[path]?.bytes,
  };
  return { jobFile: index.jobFile, files, sha256: (path) => index.files[path]?.sha256 };
}

/** How often a create that is fetching references tells Temporal it is alive. */
const HEARTBEAT_EVERY_MS = 5_000;

/**
 * The request with every local reference replaced by its verified cached copy. Runs before the
 * create sends anything: a fetch that fails leaves the create provably unsent. Heartbeats carry no
 * details, so a create that dies while fetching is still known to have sent nothing.
 */
export async function withStoredReferences(settings: JobSettingsWithInputs, request: RenderRequest): Promise<RenderRequest> {
  const ref = settings.inputs;
  if (!ref || !request.references.some((r) => r.local)) return request;
  let lastBeat = Date.now();
  const alive = () => {
    if (Date.now() - lastBeat < HEARTBEAT_EVERY_MS) return;
    lastBeat = Date.now();
    Context.current().heartbeat();
  };
  try {
    const store = storeFor(ref);
    const index = await indexOf(ref);
    const references: ReferenceAsset[] = [];
    for (const asset of request.references) {
      const entry = asset.local && Object.hasOwn(index.files, asset.source) ? index.files[asset.source] : undefined;
      if (asset.local && !entry) {
        const message = `${asset.source} is not among the job's stored inputs (index sha256:${ref.index} in ${store.location})`;
        throw finalFailure(FailureType.storage, message);
      }
      if (!entry) {
        references.push(asset);
        continue;
      }
      // The cached copy is sent as any checked reference is: opened once without links, its bytes
      // the index's sha256 (gateway/reference-file.ts). Its real path: the cache may sit below a link.
      const copy = await realpath(await inputCache().named(store, entry, asset.source, alive));
      references.push({ ...asset, source: copy, checked: { path: copy, root: dirname(copy), sha256: entry.sha256 } });
    }
    return { ...request, references };
  } catch (error) {
    if (error instanceof ApplicationFailure) throw error;
    // The stored bytes are gone or wrong: no retry brings them back, the job must be run again.
    if (error instanceof InputMissingError || error instanceof InputDigestError) {
      throw finalFailure(FailureType.storage, error.message);
    }
    // The store could not be read (network, permissions): nothing was sent, so the workflow may create again.
    throw finalFailure(
      FailureType.createNotSent,
      `the create was not sent: its reference files could not be fetched (${(error as Error).message})`,
    );
  }
}
