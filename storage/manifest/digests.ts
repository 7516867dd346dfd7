// The sha256 of each stored video as the manifest records it, for stat() when the object itself does
// not say (local: a file is hashed otherwise; S3: a video whose sidecar is missing). Kept up to date
// with only the rows appended since the last look (Storage.readManifestSince), so a stat never reads
// the whole manifest again.
import { ManifestDigests } from './codec';
import { KeyedSerializer } from '../objects/serial';
import type { ManifestCursor, ManifestPage } from './log';

export class ManifestDigestIndex {
  private readonly digests = new ManifestDigests();
  private cursor: ManifestCursor | undefined;
  private readonly serial = new KeyedSerializer();

  constructor(private readonly readSince: (cursor: ManifestCursor | undefined) => Promise<ManifestPage>) {}

  /** Reads the rows appended since the last look (every row when the backend starts over). */
  refresh(): Promise<void> {
    return this.serial.run('digests', async () => {
      const page = await this.readSince(this.cursor);
      if (page.fromStart) this.digests.clear();
      this.digests.add(page.rows);
      this.cursor = page.cursor;
    });
  }

  /** The recorded sha256 of the first of `names` recorded with `bytes` bytes, as of the last refresh. */
  known(names: string[], bytes: number): string | undefined {
    return this.digests.lookup(names, bytes);
  }

  async lookup(names: string[], bytes: number): Promise<string | undefined> {
    await this.refresh();
    return this.known(names, bytes);
  }
}
