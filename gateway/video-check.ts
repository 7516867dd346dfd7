// Only a video is a video: a gateway that answers a download with an error page, a JSON document
// or anything else would otherwise be stored under the video's name and recorded as succeeded.
import { DownloadError } from './errors';
import { discard, header, readText, type HttpResponse, type ResponseBody } from './http';
import { redact } from './redact';
import { CONTAINER_HEAD_BYTES as HEAD_BYTES, containerOf } from './video-container';

/** Content types that are never a video, whatever the bytes. */
const NOT_VIDEO_TYPE = /^(application\/(json|problem\+json|xml)|text\/)/i;

/** Whether the first bytes are one of the containers reelflow stores (ISO BMFF: MP4, MOV, M4V; Matroska: WebM, MKV). */
function isKnownContainer(head: Buffer): boolean {
  return containerOf(head) !== undefined;
}

/** A short, printable, redacted sample of what came instead of a video. */
function sample(bytes: Buffer): string {
  const text = redact(bytes.toString('utf8'))
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * Reads the first `n` bytes of `body` and puts them back, so the stream is whole for its reader.
 * A body that ends sooner is returned as it is and not put back (it is refused as too short).
 */
async function peek(body: ResponseBody, n: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  while (size < n) {
    const chunk = body.read() as Buffer | null;
    if (chunk !== null) {
      chunks.push(chunk);
      size += chunk.length;
      continue;
    }
    if (body.readableEnded) break;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        body.off('readable', done);
        body.off('end', done);
        body.off('error', reject);
        resolve();
      };
      body.once('readable', done);
      body.once('end', done);
      body.once('error', reject);
    });
  }
  const head = Buffer.concat(chunks, size);
  // In the same tick as the last read: the stream has not emitted 'end' yet, so unshift is allowed.
  if (size >= n) body.unshift(head);
  return head;
}

/**
 * The check of a whole stored file before it is recorded (storage's `checkStart`): a resumed
 * download is checked from byte 0 of the file, not of the attempt, so kept bytes that are no video
 * (a part planted in a handed folder) never become the start of one. Retryable: storage drops the
 * part, and the next attempt downloads from byte 0, where checkVideoStart looks at the body.
 */
export function storedVideoCheck(file: string): { bytes: number; check(head: Buffer): void } {
  return {
    bytes: HEAD_BYTES,
    check(head: Buffer): void {
      if (isKnownContainer(head)) return;
      throw new DownloadError(
        `${file}: the stored file does not start as a video (no MP4, MOV, WebM or MKV): ${sample(head) || '(empty)'}; the partial write was dropped`,
        { retryable: true },
      );
    },
  };
}

/**
 * Checks the start of a download (byte 0) before anything is stored: its content type, then its
 * first bytes. Throws a final DownloadError that says what was received instead.
 */
export async function checkVideoStart(response: HttpResponse, source: string): Promise<void> {
  const type = (header(response.headers, 'content-type') ?? '').split(';')[0]!.trim();
  if (NOT_VIDEO_TYPE.test(type)) {
    const text = await readText(response.body, 2048).catch(() => '');
    throw new DownloadError(`${source} sent ${type} instead of a video: ${sample(Buffer.from(text)) || '(empty)'}`, { retryable: false });
  }
  const head = await peek(response.body, HEAD_BYTES);
  if (head.length < HEAD_BYTES) {
    throw new DownloadError(`${source} sent ${head.length} bytes, too few to be a video${head.length ? `: ${sample(head)}` : ''}`, {
      retryable: false,
    });
  }
  if (!isKnownContainer(head)) {
    discard(response.body);
    throw new DownloadError(
      `${source} sent something that is not a video (its first bytes are no MP4, MOV, WebM or MKV): ` + `${sample(head) || '(empty)'}`,
      { retryable: false },
    );
  }
}
