import type { OutputSettings } from '../jobfile/plan';
import type { ManifestRow } from '../storage/manifest';
import { storageFor } from './context';
import { translated } from './failures';
import { metricsHere } from './metrics';

/** Appends the item's final manifest line beside its video, then counts the item's end. */
export function recordItem(input: { output: OutputSettings; row: ManifestRow }): Promise<void> {
  return translated(async () => {
    await storageFor(input.output).appendManifest(input.row);
    metricsHere().itemEnded(input.row);
  });
}
