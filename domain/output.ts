// The layout of an output location (docs/files.md): reelflow's own file names in it, and what a
// video is called by its content type. Checked where a job file is read (jobfile/output-names.ts),
// used where videos are written (activities/download.ts, storage/), and where they are served
// (the review page).

/** The manifest's file name (local) and the S3 key prefix of its rows. */
export const MANIFEST_FILE = 'manifest.jsonl';
/** A download in progress is written to `<name>.part`. */
export const PART_SUFFIX = '.part';
/** Beside a local `<name>.part`: which download wrote it (only that one may resume it, docs/files.md). */
export const PART_RECORD_SUFFIX = '.part.json';

/** The video content types a gateway answers with, and the extension each gives the stored file. */
const VIDEO_TYPES = {
  'video/mp4': '.mp4',
  'video/quicktime': '.mov',
  'video/webm': '.webm',
  'video/x-matroska': '.mkv',
} as const;

/** Extensions a downloaded video can get. */
export const VIDEO_EXTENSIONS: readonly string[] = Object.values(VIDEO_TYPES);

/** The extension the content type implies; `.mp4` when the server did not say, or named another. */
export function extensionFor(contentType: string | undefined): string {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return (
    (type !== undefined && Object.prototype.hasOwnProperty.call(VIDEO_TYPES, type) && VIDEO_TYPES[type as keyof typeof VIDEO_TYPES]) ||
    '.mp4'
  );
}

/** The content type of a stored file by its extension: the videos above, and the other files reelflow writes. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(VIDEO_TYPES).map(([type, ext]) => [ext.slice(1), type])),
  m4v: 'video/mp4',
  gif: 'image/gif',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  json: 'application/json',
  html: 'text/html; charset=utf-8',
};

export function contentTypeFor(name: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  return (
    (ext !== undefined && Object.prototype.hasOwnProperty.call(CONTENT_TYPES, ext) && CONTENT_TYPES[ext]) || 'application/octet-stream'
  );
}
