// `reelflow report`: a self-contained report.html beside the videos (docs/commands.md). Reads nothing
// but the given rows and the output directory, so it works for any storage that has a local copy.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { FilmRecord } from '../../storage/records/films';
import type { ManifestRow } from '../../storage/manifest/row';
import type { StandingPicks } from '../../storage/records/picks';
import type { JobSpend } from '../../client/spend';
import { openUnder, renameUnder, safeDir } from '../../storage/objects/safe-path';
import { findMediaTools, inspectVideos } from './posters';
import { summarize } from './summary';
import { renderReport } from './template';

export const REPORT_FILE = 'report.html';

export interface WriteReportInput {
  job: string;
  rows: ManifestRow[];
  /** Local directory holding the videos; report.html and posters/ are written here. */
  outputDir: string;
  jobFile?: string;
  generatedAt?: Date;
  /** The standing picks, by render (shown read-only: picks are made in `reelflow review`). */
  picks?: StandingPicks;
  /** Earlier renders that still carry a pick (docs/takes.md). */
  earlier?: ManifestRow[];
  /** The last review's time (ms): takes finished after it and unpicked are marked new. */
  lastReviewAt?: number;
  /** What the job spent, per model (client/spend.ts spendOf). */
  spend?: JobSpend;
  /** The job's assembled films, each shown with a player, and its chains of shots as strips (docs/chains.md). */
  films?: readonly FilmRecord[];
  chains?: readonly string[][];
  /** Tool paths; null pretends the tool is absent. Default: looked up on PATH. */
  tools?: { ffmpeg?: string | null; ffprobe?: string | null };
}

export interface WriteReportResult {
  /** Absolute path of the written report.html. */
  path: string;
  /** Videos shown with a real poster frame (extracted now or reused). */
  posters: number;
  /** Whether ffmpeg was available for poster frames. */
  ffmpeg: boolean;
}

/** Which files to ffprobe: those whose rows do not say the ratio and resolution they asked for. */
export function needsProbe(rows: readonly ManifestRow[]): (file: string) => boolean {
  const described = new Set(rows.filter((r) => r.ratio && r.resolution && typeof r.seconds === 'number').map((r) => r.file));
  return (file) => !described.has(file);
}

export async function writeReport(input: WriteReportInput): Promise<WriteReportResult> {
  const tools = await findMediaTools(input.tools);
  const stored = [...input.rows, ...(input.earlier ?? [])].filter(
    (r) => r.state === 'succeeded' && typeof r.file === 'string' && r.file !== '',
  );
  await safeDir(input.outputDir, '', true);
  const media = await inspectVideos(
    input.outputDir,
    stored.map((r) => r.file as string),
    tools,
    needsProbe(stored),
  );
  const html = renderReport({
    job: input.job,
    jobFile: input.jobFile,
    generatedAt: input.generatedAt ?? new Date(),
    rows: input.rows,
    summary: summarize(input.rows),
    media,
    ffmpeg: tools.ffmpeg !== undefined,
    ...(input.picks ? { picks: input.picks } : {}),
    ...(input.earlier ? { earlier: input.earlier } : {}),
    ...(input.lastReviewAt !== undefined ? { lastReviewAt: input.lastReviewAt } : {}),
    ...(input.spend ? { spend: input.spend } : {}),
    ...(input.films?.length ? { films: input.films } : {}),
    ...(input.chains?.length ? { chains: input.chains } : {}),
  });
  const path = resolve(input.outputDir, REPORT_FILE);
  // Atomic replace: a reader (or a browser tab being refreshed) never sees half a page. The
  // temporary file is new (exclusive, unguessable name) and nothing is written through a link
  // (docs/files.md); a link at report.html itself is refused rather than replaced.
  const temp = `.${REPORT_FILE}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fh = await openUnder(input.outputDir, temp, 'create');
    try {
      await fh.writeFile(html, 'utf8');
    } finally {
      await fh.close();
    }
    await renameUnder(input.outputDir, temp, REPORT_FILE);
  } finally {
    await rm(resolve(input.outputDir, temp), { force: true });
  }
  const posters = [...media.values()].filter((m) => m.poster !== undefined).length;
  return { path, posters, ffmpeg: tools.ffmpeg !== undefined };
}
