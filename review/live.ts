// What `reelflow review` knows about its job (docs/review.md): the latest row of each take, read
// from the manifest incrementally (Storage.readManifestSince), each stored video's poster and
// size, and the picks, by render (a take rendered again for a changed request starts unpicked; its
// earlier render keeps its pick and stays on the page). Every change gets a version, so a page (or
// a reconnecting event stream) asks for exactly what it has not seen.
import { readFilmRecords, type FilmRecord } from '../storage/films';
import type { ManifestRow } from '../storage/manifest';
import { appendPicks, lastPickAt, readPicks, StandingPicks, type Pick } from '../storage/picks';
import type { ManifestCursor, Storage } from '../storage/storage';
import { needsProbe } from './report';
import { earlierPicked, promptOf } from './report/layout';
import { extractPoster, inspectVideo, posterName, probeVideo, type MediaTools, type VideoMedia } from './report/posters';
import { remoteVideoInput } from './report/video-input';
import { warnSkippedRows } from '../client/manifest-rows';

export type LiveChange = { version: number; kind: 'take'; key: string } | { version: number; kind: 'pick'; pick: Pick };

/** How often the films' records are read again (ms). */
const FILMS_EVERY_MS = 10_000;

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
  /** Every row read, re-runs included: what the job spent counts each run (client/spend.ts). */
  allRows: ManifestRow[] = [];
  readonly media = new Map<string, VideoMedia>();
  /** Every decision read at start or made since, in order. */
  private decisions: Pick[] = [];
  picks: StandingPicks = StandingPicks.of([], []);
  /** The last pick before this review began (ms): takes finished after it are new. */
  lastReviewAt: number | undefined;
  /** Whether the rows there at start have been read and their posters made. */
  ready = false;
  /** Stored videos the page may show: current renders, earlier ones with a pick, and those being inspected. */
  private readonly videos = new Set<string>();
  version = 0;
  /** The job's assembled films (storage/films.ts), read with the rows; their files are servable. */
  films: FilmRecord[] = [];
  private filmsReadAt = -Infinity;
  private readonly changes: LiveChange[] = [];
  private cursor: ManifestCursor | undefined;
  private readonly listeners = new Set<(change: LiveChange) => void>();
  private refreshing: Promise<void> | undefined;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: LiveJobOptions) {}

  /** Reads the picks once; later ones are the server's own writes. */
  async start(): Promise<void> {
    this.decisions = await readPicks(this.options.storage);
    this.lastReviewAt = lastPickAt(this.decisions);
    await this.refresh();
    this.ready = true;
  }

  /** Earlier renders that carry a pick (shown after their take's current render). */
  earlier(): ManifestRow[] {
    return earlierPicked(this.allRows, this.picks);
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
      const id = change.kind === 'take' ? `t:${change.key}` : `p:${change.pick.key}\u0000${change.pick.file ?? ''}`;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(change);
    }
    return out.reverse();
  }

  /** Whether `name` is a file this job's page may show: a stored video of a row, or its poster. */
  servable(name: string): 'video' | 'poster' | undefined {
    if (this.videos.has(name) || this.films.some((film) => film.file === name)) return 'video';
    if (name.startsWith('posters/') && name.endsWith('.jpg')) {
      const file = name.slice('posters/'.length, -'.jpg'.length);
      if (this.videos.has(file) && this.media.get(file)?.poster === name) return 'poster';
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
    // Films are few small records, read whole (a film made again replaces its record); a job makes
    // them at its end, so a look every few seconds is soon enough, and spares S3 a listing a second.
    if (Date.now() - this.filmsReadAt >= FILMS_EVERY_MS) {
      this.films = await readFilmRecords(this.options.storage);
      this.filmsReadAt = Date.now();
    }
    const page = await this.options.storage.readManifestSince(this.cursor);
    warnSkippedRows(page.skipped);
    this.cursor = page.cursor;
    this.allRows = page.fromStart ? [...page.rows] : this.allRows.concat(page.rows);
    // Picks that name only a key are placed by the rows (storage/picks.ts); new rows may place them.
    this.picks = StandingPicks.of(this.decisions, this.allRows);
    const changed = new Map<string, ManifestRow>();
    for (const row of page.rows) {
      const before = this.rows.get(row.key);
      if (!page.fromStart || !before || JSON.stringify(before) !== JSON.stringify(row)) changed.set(row.key, row);
    }
    const earlier = this.earlier().filter((row) => row.file && !this.media.has(row.file));
    const probe = needsProbe([...changed.values(), ...earlier]);
    for (const row of earlier) await this.inspectRow(row, probe);
    for (const row of changed.values()) {
      // The poster before the row: a page made meanwhile never shows a take without its poster.
      await this.inspectRow(row, probe);
      this.rows.set(row.key, row);
      this.emit({ version: ++this.version, kind: 'take', key: row.key });
    }
  }

  private async inspectRow(row: ManifestRow, probe: (file: string) => boolean): Promise<void> {
    if (row.state !== 'succeeded' || !row.file) return;
    // Servable first: ffmpeg reading an S3 video through the server needs it.
    this.videos.add(row.file);
    this.media.set(row.file, await this.inspect(row.file, probe(row.file)));
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

  /** The current rows of a take's prompt, in manifest order. */
  promptRows(key: string): ManifestRow[] {
    const prompt = promptOf({ key });
    return [...this.rows.values()].filter((r) => promptOf(r) === prompt);
  }

  /** The row a pick names: the current render of `key`, or an earlier render of it stored as `file`. */
  renderFor(key: string, file: string | undefined): ManifestRow | undefined {
    const current = this.rows.get(key);
    if (file === undefined || current?.file === file) return current;
    return this.earlier().find((row) => row.key === key && row.file === file);
  }

  /** Writes one decision to picks.jsonl (one write at a time) and tells every page. */
  decide(pick: Pick): Promise<Pick> {
    const write = this.writes.then(async () => {
      await appendPicks(this.options.storage, [pick]);
      this.decisions.push(pick);
      this.picks.add(pick);
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
