import type { OutputSettings } from '../jobfile/plan';
import type { ManifestRow } from '../storage/manifest';
import { storageFor } from './context';
import { translated } from './failures';

/** Appends the item's final manifest line beside its video. */
export function recordItem(input: { output: OutputSettings; row: ManifestRow }): Promise<void> {
  return translated(() => storageFor(input.output).appendManifest(input.row));
}
