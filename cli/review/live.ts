// What `reelflow review` knows about its job (docs/review.md): the latest row of each take, read
// from the manifest incrementally (Storage.readManifestSince), each stored video's poster and
// size, and the picks. Every change gets a version, so a page (or a reconnecting event stream)
// asks for exactly what it has not seen.
import type { ManifestRow } from '../../storage/manifest';
import { appendPicks, currentPicks, readPicks, type Pick } from '../../storage/picks';
import type { ManifestCursor, Storage } from '../../storage/storage';
import { needsProbe } from '../report';
import { groupOf } from '../report/layout';
import { extractPoster, inspectVideo, posterName, probeVideo, type MediaTools, type VideoMedia } from '../report/posters';
import { remoteVideoInput } from '../report/video-input';
import { warnSkippedRows } from '../manifest-rows';

export type LiveChange = { version: number; kind: 'take'; key: string } | { version: number; kind: 'pick'; pick: Pick };

export interface LiveJobOptions {
  storage: Storage;
  /** The output directory when it is local: posters are made there and videos served from it. */
  localDir?: string;
  /**
   * Otherwise (S3): a private folder for the posters, and the address at which ffmpeg reads a video
   * (the review server's own, which streams it from the bucket).
   */
  remote?: { posterDir: string; videoUrl(file: string): string };
  tools: MediaTools;
}

export class LiveJob {
  readonly rows = new Map<string, ManifestRow>();
  /** Every row read, re-runs included: what the job spent counts each run (cli/spend.ts). */
  allRows: ManifestRow[] = [];
  readonly media = new Map<string, VideoMedia>();
  picks = new Map<string, Pick>();
  version = 0;
  private readonly changes: LiveChange[] = [];
  private cursor: ManifestCursor | undefined;
  private readonly listeners = new Set<(change: LiveChange) => void>();
  private refreshing: Promise<void> | undefined;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: LiveJobOptions) {}

  /** Reads the picks once; later ones are the server's own writes. */
  async start(): Promise<void> {
    this.picks = currentPicks(await readPicks(this.options.storage));
    await this.refresh();
  }

  /** Calls `fn` for each change from now on; returns the function that stops it. */
  subscribe(fn: (change: LiveChange) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The changes after `version`, oldest first (a take changed twice is sent once, at its latest). */
  since(version: number): LiveChange[] {
    const out: LiveChange[] = [];
    const seen = new Set<string>();
    for (let i = this.changes.length - 1; i >= 0 && (this.changes[i] as LiveChange).version > version; i--) {
      const change = this.changes[i] as LiveChange;
      const id = change.kind === 'take' ? `t:${change.key}` : `p:${change.pick.key}`;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(change);
    }
    return out.reverse();
  }

  /** Whether `name` is a file this job's page may show: a stored video of a row, or its poster. */
  servable(name: string): 'video' | 'poster' | undefined {
    for (const row of this.rows.values()) {
      if (row.state !== 'succeeded' || !row.file) continue;
      if (row.file === name) return 'video';
      if (name === posterName(row.file) && this.media.get(row.file)?.poster === name) return 'poster';
    }
    return undefined;
  }

  /** Reads the rows appended since the last call (one refresh at a time). */
  refresh(): Promise<void> {
    this.refreshing ??= this.readNewRows().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async readNewRows(): Promise<void> {
    const page = await this.options.storage.readManifestSince(this.cursor);
    warnSkippedRows(page.skipped);
    this.cursor = page.cursor;
    this.allRows = page.fromStart ? [...page.rows] : this.allRows.concat(page.rows);
    const changed = new Map<string, ManifestRow>();
    for (const row of page.rows) {
      const before = this.rows.get(row.key);
      if (!page.fromStart || !before || JSON.stringify(before) !== JSON.stringify(row)) changed.set(row.key, row);
    }
    const probe = needsProbe([...changed.values()]);
    for (const row of changed.values()) {
      // The row first: ffmpeg reading an S3 video through the server needs it to be servable.
      this.rows.set(row.key, row);
      if (row.state === 'succeeded' && row.file) this.media.set(row.file, await this.inspect(row.file, probe(row.file)));
      this.emit({ version: ++this.version, kind: 'take', key: row.key });
    }
  }

  /** Poster (and, with `probe`, duration and size) of a stored video. */
  private async inspect(file: string, probe: boolean): Promise<VideoMedia> {
    const { localDir, remote, tools, storage } = this.options;
    if (localDir) return inspectVideo(localDir, file, tools, probe);
    if (!remote || !(await storage.stat(file))) return { exists: false };
    const media: VideoMedia = { exists: true };
    const video = await remoteVideoInput(storage, file, remote.videoUrl(file));
    if (!video) return media;
    if (tools.ffmpeg && (await extractPoster(tools.ffmpeg, video, remote.posterDir, posterName(file)))) media.poster = posterName(file);
    if (tools.ffprobe && probe) Object.assign(media, await probeVideo(tools.ffprobe, video));
    return media;
  }

  /** Where the posters are: the output directory, or the private folder of an S3 output's. */
  get posterDir(): string | undefined {
    return this.options.localDir ?? this.options.remote?.posterDir;
  }

  /** The rows of a take's group, in manifest order. */
  groupRows(key: string): ManifestRow[] {
    const row = this.rows.get(key);
    if (!row) return [];
    const group = groupOf(row);
    return [...this.rows.values()].filter((r) => groupOf(r) === group);
  }

  /** Writes one decision to picks.jsonl (one write at a time) and tells every page. */
  decide(pick: Pick): Promise<Pick> {
    const write = this.writes.then(async () => {
      await appendPicks(this.options.storage, [pick]);
      if (pick.verdict === 'clear') this.picks.delete(pick.key);
      else this.picks.set(pick.key, pick);
      this.emit({ version: ++this.version, kind: 'pick', pick });
      return pick;
    });
    this.writes = write.catch(() => undefined);
    return write;
  }

  private emit(change: LiveChange): void {
    this.changes.push(change);
    for (const fn of this.listeners) fn(change);
  }
}
