// What a local reference holds, for an item's request digest (docs/reruns.md): a reference edited
// in place is a changed request, rendered again. A job with stored inputs knows each file's sha256
// from its index; otherwise the file is hashed, once per path, size and modification time in this
// process (a 384 MiB reference is read once, not once per plan page).
import { stat } from 'node:fs/promises';
import { hashFile } from '../storage/local';

/** sha256 of a local reference's content; undefined when it cannot be known now. */
export type ReferenceDigests = (path: string) => Promise<string | undefined>;

const hashed = new Map<string, string>();
/** Enough for the references of any one job; a worker serving many jobs starts over past it. */
const MAX_REMEMBERED = 10_000;

/** Reads the file at its path: the submitter's machine, or a worker of a job without stored inputs. */
export const localReferenceDigests: ReferenceDigests = async (path) => {
  try {
    const st = await stat(path);
    const version = `${path}\u0000${st.size}\u0000${st.mtimeMs}`;
    let sha256 = hashed.get(version);
    if (sha256 === undefined) {
      sha256 = await hashFile(path);
      if (hashed.size >= MAX_REMEMBERED) hashed.clear();
      hashed.set(version, sha256);
    }
    return sha256;
  } catch {
    // Gone or unreadable: the item is judged by what else its request says (requestChanged).
    return undefined;
  }
};
