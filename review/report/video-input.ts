// What ffmpeg and ffprobe are handed: only a stored file whose first bytes are a video container
// reelflow stores (gateway/video-container.ts), read with that container's demuxer and no protocol
// beyond the one that reaches the file. Left to guess, ffmpeg probes every demuxer it has: a
// "video" planted in a handed folder that is an HLS playlist (or a concat list) makes it open
// whatever the playlist names, a private file elsewhere included, and put it in a poster.
// Every ffmpeg and ffprobe call of reelflow takes its input from here (review/report/posters.ts).
import { CONTAINER_HEAD_BYTES, containerOf, type VideoContainer } from '../../gateway';
import { openFile } from '../../storage/safe-path';
import type { Storage } from '../../storage/storage';

/** ffmpeg's demuxer for each container (`mp4` names the ISO BMFF demuxer, MOV included). */
const DEMUXER: Record<VideoContainer, string> = { 'iso-bmff': 'mp4', matroska: 'matroska' };

declare const checked: unique symbol;

/** ffmpeg's and ffprobe's input options for a file checked to be a video: `-f`, `-protocol_whitelist`, `-i`. */
export type VideoInput = readonly string[] & { readonly [checked]: true };

function inputFor(head: Buffer, protocols: string, location: string): VideoInput | undefined {
  const container = containerOf(head);
  if (!container) return undefined;
  return ['-f', DEMUXER[container], '-protocol_whitelist', protocols, '-i', location] as unknown as VideoInput;
}

/** A local file's input; undefined when it is no regular file (a link is not followed) or no video. */
export async function localVideoInput(path: string): Promise<VideoInput | undefined> {
  let head: Buffer;
  try {
    const fh = await openFile(path, 'read');
    try {
      const buf = Buffer.alloc(CONTAINER_HEAD_BYTES);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      head = buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
  return inputFor(head, 'file', path);
}

/**
 * A stored object read by ffmpeg at `url` (the review server's own address, which streams it from
 * the bucket); its first bytes are read from storage first. Undefined when it is missing or no video.
 */
export async function remoteVideoInput(storage: Storage, name: string, url: string): Promise<VideoInput | undefined> {
  const chunks: Buffer[] = [];
  try {
    const body = await storage.readObject?.(name, { start: 0, end: CONTAINER_HEAD_BYTES - 1 });
    if (!body) return undefined;
    for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  } catch {
    return undefined;
  }
  // ffmpeg reads the address over HTTP and needs nothing else.
  return inputFor(Buffer.concat(chunks).subarray(0, CONTAINER_HEAD_BYTES), 'http,tcp', url);
}
