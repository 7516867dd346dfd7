// Element ids of the review page: keys and file names are any text, ids must not be.
import { createHash } from 'node:crypto';
import { renderKey } from '../../storage/picks';

function short(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** A stable element id for a render (a take's current render and an earlier one differ). */
export function tileId(row: { key: string; file?: string | null; request_digest?: string | undefined }): string {
  return `t-${short(renderKey(row))}`;
}

/** A stable element id for a prompt's row. */
export function rowId(prompt: string): string {
  return `g-${short(prompt)}`;
}
