// What a local reference holds, for an item's request digest (docs/reruns.md): a reference edited
// in place is a changed request, rendered again. A job with stored inputs knows each file's sha256
// from its index; otherwise the file is hashed, once per version (path, size, modification time) in
// this process (a 384 MiB reference is read once, not once per plan page).
//
// A plan page also fixes what each item's create will send (checkedReference): the file's place,
// checked against the job's read scope as the job file's expansion checks it, and its sha256. The
// create sends that file and those bytes or nothing (gateway/reference-file.ts).
import { realpathSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { hashReference, openCheckedReference } from '../gateway/reference-file';
import type { CheckedReference, RenderRequest } from '../jobfile/plan';
import { readRootOf, systemTreeOf } from '../jobfile/read-scope';
import { hashFile } from '../storage/local';

/** sha256 of a local reference's content; undefined when it cannot be known now. */
export type ReferenceDigests = (path: string) => Promise<string | undefined>;

const hashed = new Map<string, string>();
/** Enough for the references of any one job; a worker serving many jobs starts over past it. */
const MAX_REMEMBERED = 10_000;

async function remembered(version: string, hash: () => Promise<string>): Promise<string> {
  let sha256 = hashed.get(version);
  if (sha256 === undefined) {
    sha256 = await hash();
    if (hashed.size >= MAX_REMEMBERED) hashed.clear();
    hashed.set(version, sha256);
  }
  return sha256;
}

/** Reads the file at its path: the submitter's machine, or a worker of a job without stored inputs. */
export const localReferenceDigests: ReferenceDigests = async (path) => {
  try {
    const st = await stat(path);
    return await remembered(`${path}\u0000${st.size}\u0000${st.mtimeMs}`, () => hashFile(path));
  } catch {
    // Gone or unreadable: the item is judged by what else its request says (requestChanged).
    return undefined;
  }
};

/** Where a job may read: its job file's folder, and the folders its user allowed (JobInput.allowRead). */
export interface ReadScope {
  jobDir: string;
  allowRead: readonly string[];
}

function realPathOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The local reference as its create must send it: links resolved now, the place checked against the
 * job's read scope (as jobfile/read-scope.ts does), and its sha256 read from the very descriptor
 * opened without links. A file that is gone, unreadable or out of scope now gets no digest and its
 * written path under the job's folder: its create then refuses it, naming why.
 */
export async function checkedReference(source: string, scope: ReadScope): Promise<CheckedReference> {
  const real = await realpath(source).catch(() => undefined);
  const root = real === undefined || systemTreeOf(real) ? undefined : readRootOf(real, scope.jobDir, scope.allowRead, realPathOrUndefined);
  if (real !== undefined && root !== undefined) {
    try {
      const file = await openCheckedReference({ path: real, root });
      try {
        const info = await file.handle.stat();
        const sha256 = await remembered(`${real}\u0000${info.dev}:${info.ino}\u0000${info.size}\u0000${info.mtimeMs}`, () =>
          hashReference(file),
        );
        return { path: real, root, sha256 };
      } finally {
        await file.close();
      }
    } catch {
      // Replaced while it was checked: refused by its create, as below.
    }
  }
  return { path: source, root: readRootOf(source, scope.jobDir, scope.allowRead, () => undefined) ?? scope.jobDir };
}

/** The request with each local reference's `checked` set (checkedReference). */
export async function withCheckedReferences(request: RenderRequest, scope: ReadScope): Promise<RenderRequest> {
  if (!request.references.some((r) => r.local)) return request;
  const references = [];
  for (const asset of request.references)
    references.push(asset.local ? { ...asset, checked: await checkedReference(asset.source, scope) } : asset);
  return { ...request, references };
}

/** The digests a page's check took (withCheckedReferences), by path. */
export function checkedDigests(request: RenderRequest): ReferenceDigests {
  return (path) => Promise.resolve(request.references.find((r) => r.source === path)?.checked?.sha256);
}
