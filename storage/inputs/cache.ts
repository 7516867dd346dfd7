// A worker's local copies of job inputs, by digest: `<cache>/sha256/<hex>`, written only once
// their bytes are verified (writeVerified), so a file under a digest's name is that digest's bytes
// and a hit is used without fetching again. References also get a name ending like the original
// (`<cache>/named/<hex>/<file name>`, a hard link) because gateways read a reference's type from
// its extension and send its file name. Nothing is written through a link under the cache
// directory (safe-path.ts).
import { constants } from 'node:fs';
import { copyFile, link, lstat, readFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { errnoCode } from '../objects/errors';
import { writeVerified } from './local';
import { checkDigest, type InputEntry, type InputStore } from './refs';
import { renameUnder, safeDir } from '../objects/safe-path';

/** `$REELFLOW_INPUTS_CACHE`, else `$XDG_CACHE_HOME/reelflow/inputs` (default `~/.cache/reelflow/inputs`). */
export function defaultInputCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.REELFLOW_INPUTS_CACHE) return resolve(env.REELFLOW_INPUTS_CACHE);
  const xdg = env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache');
  return join(xdg, 'reelflow', 'inputs');
}

export class InputCache {
  /** Fetches in progress by digest: concurrent users of one input share one download. */
  private readonly fetching = new Map<string, Promise<string>>();
  /** How many times bytes were fetched from a store (tests: a hit fetches nothing). */
  fetches = 0;

  constructor(readonly dir: string) {}

  private path(sha256: string): string {
    return join(this.dir, 'sha256', checkDigest(sha256));
  }

  /** The local path of `entry`'s verified bytes, fetched from `store` unless already here. */
  file(store: InputStore, entry: Pick<InputEntry, 'sha256' | 'bytes'>, onProgress?: (bytes: number) => void): Promise<string> {
    const running = this.fetching.get(entry.sha256);
    if (running) return running;
    const fetched = this.fetch(store, entry, onProgress).finally(() => this.fetching.delete(entry.sha256));
    this.fetching.set(entry.sha256, fetched);
    return fetched;
  }

  /** A text input (the job file, items_from) as the loader reads it. */
  async text(store: InputStore, entry: InputEntry): Promise<string> {
    return readFile(await this.file(store, entry), 'utf8');
  }

  /**
   * The cached bytes of `entry` under the file name of `originalPath`, fetched first if need be.
   * A hard link (a copy where links cannot be made), so the view and the bytes are one file.
   */
  async named(store: InputStore, entry: InputEntry, originalPath: string, onProgress?: (bytes: number) => void): Promise<string> {
    const bytes = await this.file(store, entry, onProgress);
    const name = basename(originalPath);
    // The index names the path; only its last part, and never one that would leave the directory.
    const folder = `named/${checkDigest(entry.sha256)}`;
    const viewName = `${folder}/${name === '' || name === '.' || name === '..' ? 'input' : name}`;
    const view = join(this.dir, ...viewName.split('/'));
    await safeDir(this.dir, folder, true);
    if ((await sizeOf(view)) === entry.bytes) return view;
    const temporary = `${viewName}.${randomBytes(6).toString('hex')}.tmp`;
    const temporaryPath = join(this.dir, ...temporary.split('/'));
    try {
      // link() and COPYFILE_EXCL create the name and never follow a link there.
      await link(bytes, temporaryPath).catch(async (error: unknown) => {
        if (!['EXDEV', 'EPERM', 'EMLINK', 'ENOTSUP'].includes(errnoCode(error) ?? '')) throw error;
        await copyFile(bytes, temporaryPath, constants.COPYFILE_EXCL);
      });
      await renameUnder(this.dir, temporary, viewName);
    } finally {
      await rm(temporaryPath, { force: true });
    }
    return view;
  }

  private async fetch(
    store: InputStore,
    entry: Pick<InputEntry, 'sha256' | 'bytes'>,
    onProgress?: (bytes: number) => void,
  ): Promise<string> {
    const path = this.path(entry.sha256);
    await safeDir(this.dir, 'sha256', true);
    if ((await sizeOf(path)) === entry.bytes) return path;
    this.fetches += 1;
    const body = await store.get(entry.sha256);
    const name = `sha256/${checkDigest(entry.sha256)}`;
    await writeVerified(body, { root: this.dir, name, sha256: entry.sha256, bytes: entry.bytes, from: store.location, onProgress });
    return path;
  }
}

/** The size of a regular file at `path` (a link there is not one). */
async function sizeOf(path: string): Promise<number | undefined> {
  return lstat(path).then(
    (st) => (st.isFile() ? st.size : undefined),
    () => undefined,
  );
}
