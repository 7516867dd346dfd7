// What a chained item's create sends of the items it needs (docs/chains.md): the last frame the
// gateway returned with a needed item (stored when it succeeded, activities/gateway-frame.ts), else
// its last frame or a frame of its stored video, or the video itself, resolved on the worker just
// before the create sends anything. Frames are stored content-addressed beside the job's inputs, where
// every worker of a fleet reads them, and sent as ordinary checked references with their role.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ItemNeed } from '../jobfile/chains';
import type { ReferenceAsset, RenderRequest } from '../jobfile/plan';
import { FrameError, frameAt, lastFrame } from '../media/frames';
import { InputDigestError, InputMissingError, inputLocationFor, type InputLocation, type InputStore } from '../storage/inputs/refs';
import { latestRowByKey, type ManifestRow } from '../storage/manifest/row';
import type { Storage } from '../storage/storage';
import { storageFor } from './context';
import { FailureType } from '../domain/failures';
import { finalFailure } from './failures';
import { inputCache, inputStoreAt, type JobSettingsWithInputs } from './inputs';

/** How often a create that is making frames tells Temporal it is alive (its heartbeat timeout is 20 s). */
const HEARTBEAT_EVERY_MS = 5_000;

/**
 * Where a job's frames are stored: its stored inputs' location when it has one (S3 output, a named
 * location), else `.reelflow/frames` in its local output directory, which every worker of a fleet
 * mounts to write the outputs.
 */
export function frameStoreLocation(settings: JobSettingsWithInputs): InputLocation {
  if (settings.inputs) return settings.inputs.location;
  const beside = inputLocationFor(settings.output, undefined);
  if (beside) return beside;
  return { kind: 'dir', dir: join(settings.output.dir ?? '.', '.reelflow', 'frames') };
}

/**
 * The request with its needs (RenderRequest.needs) made into references, first in its list, and the
 * needs taken out. A need whose output is not stored (deleted since, never rendered) fails the
 * create before it sends anything: no retry brings it back.
 */
export async function withNeededOutputs(settings: JobSettingsWithInputs, request: RenderRequest): Promise<RenderRequest> {
  const { needs, ...rest } = request;
  if (!needs || needs.length === 0) return rest;
  const beat = setInterval(() => Context.current().heartbeat(), HEARTBEAT_EVERY_MS);
  const scratch = await mkdtemp(join(tmpdir(), 'reelflow-needs-'));
  try {
    const storage = storageFor(settings.output);
    const latest = latestRowByKey((await storage.readManifest()).rows);
    const store = inputStoreAt(frameStoreLocation(settings));
    const references: ReferenceAsset[] = [];
    for (const [n, need] of needs.entries()) {
      const row = latest.get(need.key);
      if (row?.state !== 'succeeded' || !row.file) {
        throw finalFailure(FailureType.storage, `${need.key}, which this item needs, has no stored output: run the job again to render it`);
      }
      const copy =
        (need.use === 'last_frame' && (await gatewayFrame(store, row))) ||
        (await frameFromVideo(storage, store, need, row, join(scratch, String(n))));
      references.push({
        kind: need.use === 'video' ? 'video' : 'image',
        role: need.use === 'video' ? 'reference_video' : (need.role ?? 'first_frame'),
        source: copy.path,
        local: true,
        checked: { path: copy.path, root: dirname(copy.path), sha256: copy.sha256 },
      });
    }
    return { ...rest, references: [...references, ...rest.references] };
  } catch (error) {
    if (error instanceof FrameError || error instanceof InputMissingError || error instanceof InputDigestError) {
      throw finalFailure(FailureType.storage, `the frame this item starts from could not be made: ${error.message}`);
    }
    if (error instanceof ApplicationFailure) throw error;
    // The outputs or the frame store could not be read (network, permissions): nothing was sent.
    throw finalFailure(
      FailureType.createNotSent,
      `the create was not sent: the outputs it needs could not be read (${(error as Error).message})`,
    );
  } finally {
    clearInterval(beat);
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The last frame the gateway handed back with the needed shot (stored when it succeeded,
 * activities/gateway-frame.ts), as a local file; undefined when it gave none or the store lost it.
 */
async function gatewayFrame(store: InputStore, row: ManifestRow): Promise<LocalFrame | undefined> {
  const frame = row.last_frame;
  if (!frame) return undefined;
  const name = `${safeName(row)}-last-frame.${frame.type === 'jpeg' ? 'jpg' : 'png'}`;
  try {
    return { path: await inputCache().named(store, frame, name), sha256: frame.sha256 };
  } catch (error) {
    if (error instanceof InputMissingError || error instanceof InputDigestError) return undefined;
    throw error;
  }
}

/** The frame (or the video) a need takes out of the needed shot's stored video, stored in the frame store; its local copy. */
async function frameFromVideo(storage: Storage, store: InputStore, need: ItemNeed, row: ManifestRow, scratch: string): Promise<LocalFrame> {
  const video = await localCopy(storage, row, `${scratch}-video.mp4`);
  const file = need.use === 'video' ? video : `${scratch}-frame.png`;
  if (need.use === 'last_frame') await lastFrame(video, file);
  else if (need.use === 'frame') await frameAt(video, need.at ?? 0, file);
  const entry = await contentOf(file);
  if ((await store.missing([entry.sha256])).size > 0) await store.put(entry.sha256, entry.bytes, () => createReadStream(file));
  return { path: await inputCache().named(store, entry, nameOf(need, row)), sha256: entry.sha256 };
}

/** A need's file on this worker (a view of the cache) and its digest. */
interface LocalFrame {
  path: string;
  sha256: string;
}

/** The stored video of a row as a local file: its path in a local output, else a copy read from S3. */
async function localCopy(storage: Storage, row: ManifestRow, target: string): Promise<string> {
  if (storage.localPath) return storage.localPath(row.file!);
  const size = row.bytes ?? (await storage.stat(row.file!))?.bytes;
  const body = size ? await storage.readObject?.(row.file!, { start: 0, end: size - 1 }) : undefined;
  if (!body) throw new InputMissingError(row.sha256 ?? 'unknown', storage.location, `the output ${row.file}`);
  await pipeline(body, createWriteStream(target));
  return target;
}

async function contentOf(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return { sha256: hash.digest('hex'), bytes: (await stat(path)).size };
}

/** The name a gateway sees: what it is of which item (gateways read the type from the extension). */
function nameOf(need: ItemNeed, row: ManifestRow): string {
  const safe = safeName(row);
  if (need.use === 'video') return `${safe}.mp4`;
  return need.use === 'last_frame' ? `${safe}-last-frame.png` : `${safe}-at-${need.at ?? 0}s.png`;
}

function safeName(row: ManifestRow): string {
  return row.key.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80) || randomBytes(4).toString('hex');
}
