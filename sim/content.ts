// Streaming a video body with Content-Length, ETag and single byte ranges (206 / 416), and cutting
// it mid-body when the fault says so. Shared by the gateway's content endpoint and the CDN.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultEngine } from './faults';
import type { VideoBody } from './mp4';
import type { StatsRecorder } from './stats';

// One shared zero buffer: the padding is views of it, never fresh allocations.
const CHUNK = 1024 * 1024;
const ZEROS = Buffer.alloc(CHUNK);

export type ByteRange = { start: number; end: number };

/** Parses a single `bytes=` range; null = serve the whole body, 'unsatisfiable' = 416. */
export function parseRange(header: string | undefined, total: number): ByteRange | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return null; // multiple or malformed ranges: a plain 200 is allowed (RFC 9110 §14.2)
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return null;
  if (a === '') {
    const n = Number(b);
    if (n === 0) return 'unsatisfiable';
    return { start: Math.max(0, total - n), end: total - 1 };
  }
  const start = Number(a);
  const end = b === '' ? total - 1 : Math.min(Number(b), total - 1);
  if (start >= total || end < start) return 'unsatisfiable';
  return { start, end };
}

/** The bytes [from, to) of the served video, as views (no copies). */
function* slices(v: VideoBody, from: number, to: number): Generator<Buffer> {
  const segs: Buffer[] = [v.mp4];
  if (v.padHeader) segs.push(v.padHeader);
  let base = 0;
  for (const s of segs) {
    const lo = Math.max(from, base);
    const hi = Math.min(to, base + s.length);
    if (lo < hi) yield s.subarray(lo - base, hi - base);
    base += s.length;
  }
  for (let pos = Math.max(from, base); pos < to; pos += CHUNK) yield ZEROS.subarray(0, Math.min(CHUNK, to - pos));
}

function waitDrain(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = (): void => done(true);
    const onClose = (): void => done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/**
 * How a gateway that relays the video serves it. `ignoreRange`: it fetches the upstream without the
 * client's Range and streams that answer (LiteLLM, new-api): always 200 with the whole video, and
 * no validators or Accept-Ranges. `headers` are added (new-api's Cache-Control).
 */
export interface ServeOptions {
  ignoreRange?: boolean;
  headers?: Record<string, string>;
}

export async function serveVideo(
  req: IncomingMessage,
  res: ServerResponse,
  v: VideoBody,
  faults: FaultEngine,
  stats: StatsRecorder,
  options: ServeOptions = {},
): Promise<void> {
  const headers: Record<string, string | number> = options.ignoreRange
    ? { 'content-type': 'video/mp4', ...options.headers }
    : {
        'content-type': 'video/mp4',
        'accept-ranges': 'bytes',
        etag: v.etag,
        'last-modified': 'Sat, 01 Nov 2025 00:00:00 GMT',
        ...options.headers,
      };
  if (!options.ignoreRange && req.headers['if-none-match'] === v.etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  // If-Range with a stale validator means "send it all": the client's partial file is of another video.
  const ifRange = req.headers['if-range'];
  const range = options.ignoreRange || (ifRange && ifRange !== v.etag) ? null : parseRange(req.headers.range, v.total);
  if (range === 'unsatisfiable') {
    res.writeHead(416, { 'content-range': `bytes */${v.total}`, 'content-length': 0 });
    res.end();
    return;
  }
  const start = range ? range.start : 0;
  const end = range ? range.end + 1 : v.total;
  if (range) headers['content-range'] = `bytes ${range.start}-${range.end}/${v.total}`;
  headers['content-length'] = end - start;
  res.writeHead(range ? 206 : 200, headers);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const cut = faults.cutAt(end - start);
  const stop = cut === null ? end : start + cut;
  if (cut !== null) stats.fault('cut-download');
  for (const chunk of slices(v, start, stop)) {
    if (res.destroyed) return;
    stats.bytesServed += chunk.length;
    if (!res.write(chunk) && !(await waitDrain(res))) return;
  }
  if (cut !== null) {
    // Content-Length promised more: flush what was written, then close, as a dropped proxy does.
    res.socket?.destroySoon();
    return;
  }
  res.end();
}
