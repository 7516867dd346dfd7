// The last frame a gateway handed back with a finished shot (`return_last_frame`, docs/chains.md):
// fetched and stored content-addressed when the shot succeeds, because the provider's address
// expires (Seedance's within 24 hours). A frame that cannot be had is no failure: the shot's video
// is stored, and a later shot's frame is then made from it (activities/needs.ts).
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { log } from '@temporalio/activity';
import type { ManifestRow } from '../storage/manifest/row';
import { gatewayFor } from './context';
import { inputStoreAt, type JobSettingsWithInputs } from './inputs';
import { frameStoreLocation } from './needs';

export type StoredFrame = NonNullable<ManifestRow['last_frame']>;

/**
 * Fetches the frame at `address` (no key unless it is a base address's origin; PNG or JPEG,
 * bounded) and puts it in the job's frame store. Undefined, with a warning, when that fails.
 */
export async function storeGatewayFrame(
  settings: JobSettingsWithInputs,
  address: string,
  taskId: string,
  signal?: AbortSignal,
): Promise<StoredFrame | undefined> {
  try {
    const image = await gatewayFor(settings).fetchFrameImage(address, { taskId, signal });
    const sha256 = createHash('sha256').update(image.bytes).digest('hex');
    const store = inputStoreAt(frameStoreLocation(settings));
    if ((await store.missing([sha256])).size > 0) await store.put(sha256, image.bytes.length, () => Readable.from([image.bytes]));
    return { sha256, bytes: image.bytes.length, type: image.type };
  } catch (error) {
    log.warn("the gateway's last frame was not taken; a later shot's frame is made from the stored video", {
      taskId,
      reason: String((error as Error | undefined)?.message ?? error).slice(0, 300),
    });
    return undefined;
  }
}
