// Which video container a file is, told by its first bytes, never by its name or a content type:
// reelflow stores only these (docs/files.md), downloads are checked against them, and ffmpeg and
// ffprobe are told which one to read (review/report/video-input.ts) instead of guessing from the bytes.

/** Bytes read to recognise a container; every real video is longer. */
export const CONTAINER_HEAD_BYTES = 12;

/** ISO BMFF (MP4, MOV, M4V) or Matroska (WebM, MKV). */
export type VideoContainer = 'iso-bmff' | 'matroska';

/** Box types an ISO BMFF file may start with (`ftyp` for MP4; QuickTime files may start with others). */
const ISO_BMFF_FIRST_BOXES = new Set(['ftyp', 'moov', 'mdat', 'free', 'skip', 'wide', 'pnot']);
/** The EBML header's ID, the first four bytes of every Matroska and WebM file. */
const EBML_MAGIC = 0x1a45dfa3;

export function containerOf(head: Buffer): VideoContainer | undefined {
  if (head.length < CONTAINER_HEAD_BYTES) return undefined;
  if (ISO_BMFF_FIRST_BOXES.has(head.toString('latin1', 4, 8))) return 'iso-bmff';
  if (head.readUInt32BE(0) === EBML_MAGIC) return 'matroska';
  return undefined;
}
