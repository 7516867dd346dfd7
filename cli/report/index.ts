// `reelflow report`: a self-contained report.html beside the videos (spec/cli.md). Reads nothing
// but the given rows and the output directory, so it works for any storage that has a local copy.
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ManifestRow } from '../../storage/manifest';
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

export async function writeReport(input: WriteReportInput): Promise<WriteReportResult> {
  const tools = await findMediaTools(input.tools);
  const files = input.rows
    .filter((r) => r.state === 'succeeded' && typeof r.file === 'string' && r.file !== '')
    .map((r) => r.file as string);
  await mkdir(input.outputDir, { recursive: true });
  const media = await inspectVideos(input.outputDir, files, tools);
  const html = renderReport({
    job: input.job,
    jobFile: input.jobFile,
    generatedAt: input.generatedAt ?? new Date(),
    rows: input.rows,
    summary: summarize(input.rows),
    media,
    ffmpeg: tools.ffmpeg !== undefined,
  });
  const path = resolve(input.outputDir, REPORT_FILE);
  // Atomic replace: a reader (or a browser tab being refreshed) never sees half a page.
  const temp = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temp, html, 'utf8');
    await rename(temp, path);
  } finally {
    await rm(temp, { force: true });
  }
  const posters = [...media.values()].filter((m) => m.poster !== undefined).length;
  return { path, posters, ffmpeg: tools.ffmpeg !== undefined };
}
