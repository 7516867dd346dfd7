// The last frame a gateway hands back (Seedance's `content.last_frame_url`, docs/chains.md): an
// address the provider chose, fetched once when the shot succeeds. Untrusted like every gateway
// byte: one engine call (the key only to base-address origins, private targets refused as for a
// result_url), a bounded body, and only a PNG or JPEG is taken.
import { DownloadError } from './errors';
import { discard, header, sourceOf, type ResponseBody } from './http';
import { call, type Engine } from './retry';

/** A last frame larger than this is not taken (a 4K PNG is about 25 MB). */
export const MAX_FRAME_IMAGE_BYTES = 32 * 1024 * 1024;
/** One attempt's whole exchange: a frame is small, a trickling host is not waited on. */
const FRAME_EXCHANGE_TIMEOUT_MS = 60_000;

export interface FrameImage {
  bytes: Buffer;
  type: 'png' | 'jpeg';
}

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG_MAGIC = Buffer.from([0xff, 0xd8, 0xff]);

/** What image the bytes are by their first bytes (a server's content-type is not trusted). */
export function imageTypeOf(bytes: Buffer): FrameImage['type'] | undefined {
  if (bytes.subarray(0, PNG_MAGIC.length).equals(PNG_MAGIC)) return 'png';
  if (bytes.subarray(0, JPEG_MAGIC.length).equals(JPEG_MAGIC)) return 'jpeg';
  return undefined;
}

async function readBounded(body: ResponseBody, maxBytes: number, where: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      discard(body);
      throw new DownloadError(`the last frame at ${where} is larger than ${maxBytes} bytes: not taken`, { retryable: false });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** Fetches the image at `address`: its bytes when they are a PNG or JPEG of at most `maxBytes`. */
export async function fetchFrameImage(
  engine: Engine,
  address: string,
  options: { taskId?: string; signal?: AbortSignal; maxBytes?: number } = {},
): Promise<FrameImage> {
  const maxBytes = options.maxBytes ?? MAX_FRAME_IMAGE_BYTES;
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new DownloadError('the gateway gave an unusable last-frame address', { retryable: false });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new DownloadError(`the last-frame address is not http(s): ${url.protocol}`, { retryable: false });
  }
  const where = sourceOf(url);
  const result = await call(engine, {
    operation: 'download',
    method: 'GET',
    credential: 'bearer',
    followRedirects: true,
    taskId: options.taskId,
    signal: options.signal,
    exchangeTimeoutMs: FRAME_EXCHANGE_TIMEOUT_MS,
    target: () => ({ url: address }),
    headers: () => ({ accept: 'image/png, image/jpeg;q=0.9' }),
    accept: async (response, at) => {
      if (response.status !== 200) {
        discard(response.body);
        throw new DownloadError(`the last frame could not be fetched (HTTP ${response.status} from ${sourceOf(at.url)})`, {
          status: response.status,
          retryable: false,
        });
      }
      const declared = Number(header(response.headers, 'content-length'));
      if (Number.isFinite(declared) && declared > maxBytes) {
        discard(response.body);
        throw new DownloadError(`the last frame at ${where} is declared as ${declared} bytes, more than ${maxBytes}: not taken`, {
          retryable: false,
        });
      }
      return readBounded(response.body, maxBytes, where);
    },
    // An expired or refused address is not mended by asking again: the frame is made from the video instead.
    reject: (status) =>
      Promise.reject(new DownloadError(`the last frame could not be fetched (HTTP ${status} from ${where})`, { status, retryable: false })),
  });
  const type = imageTypeOf(result.value);
  if (!type) throw new DownloadError(`what ${where} answered for the last frame is neither a PNG nor a JPEG`, { retryable: false });
  return { bytes: result.value, type };
}
