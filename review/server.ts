// The review server (docs/review.md): the page, its event stream, its picks and the job's own videos
// and posters, on loopback only, under a per-run random token. What it refuses, and why:
//  - a request whose path does not start with the token: another local user or a page in the
//    browser cannot guess it, so cannot read the job or write picks;
//  - a Host other than the address it listens on (DNS rebinding: evil.example resolving to
//    127.0.0.1 would otherwise be same-origin with the server);
//  - an Origin other than its own, or a cross-site fetch (Sec-Fetch-Site);
//  - a file that is not a stored video of the manifest or its poster, or reached through a link
//    (storage/safe-path.ts): no request path reaches the file system unchecked.
import { timingSafeEqual, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FileHandle } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import type { Storage } from '../storage/storage';
import type { PlanEstimate } from '../client/estimate';
import { spendOf } from '../client/spend';
import { notInRows, type UnrecordedRewrite } from '../storage/rewrites';
import { MAX_NOTE_CHARS, pickOn, type Verdict } from '../storage/picks';
import { openUnder } from '../storage/safe-path';
import { renderFailures, renderFilters, statsFor } from './report/header';
import { rowId } from './report/ids';
import { isNew, pagePolicy, renderPromptRow, renderReport, type TileContext } from './report/template';
import { promptOf, promptRows } from './report/layout';
import { summarize } from './report/summary';
import type { LiveChange, LiveJob } from './live';

/** A picks request larger than this is refused (a note is at most MAX_NOTE_CHARS characters). */
const MAX_BODY_BYTES = 16 * 1024;
/** Comment lines keep idle event streams open through anything that times them out. */
const KEEPALIVE_MS = 15_000;

const CONTENT_TYPES: Record<string, string> = { mp4: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm', jpg: 'image/jpeg' };

export interface ReviewServerOptions {
  job: string;
  live: LiveJob;
  ffmpeg: boolean;
  /** The local output directory videos are read from; absent, they are streamed from `storage`. */
  localDir?: string;
  storage?: Storage;
  port?: number;
  /** The plan's estimate, for what the job spent per model (client/spend.ts). */
  estimate?: PlanEstimate;
  /** The paid rewrite calls the job's records keep (`reelflow enhance`'s among them), recently read (client/spend.ts recentRewriteCalls). */
  rewriteCalls?: () => Promise<readonly UnrecordedRewrite[]>;
  /** Test hook: a fixed token. Default: 24 random bytes. */
  token?: string;
  /** The plan's chains of shots, each its shots' keys in order (review/report/films.ts chainsOf). */
  chains?: string[][];
}

export interface ReviewServer {
  /** The page's address, token included. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A file the server sends: its size, its bytes from `start` to `end` (inclusive). */
interface FileSource {
  size: number;
  read(start: number, end: number): Promise<Readable>;
  close(): Promise<void>;
}

class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function startReviewServer(options: ReviewServerOptions): Promise<ReviewServer> {
  const token = options.token ?? randomBytes(24).toString('base64url');
  const streams = new Set<ServerResponse>();
  let port = 0;

  const headers = (type: string): Record<string, string> => ({
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-resource-policy': 'same-origin',
    'x-frame-options': 'DENY',
  });

  /** The request's own checks: the address it was sent to, where it came from. */
  const checkOrigin = (req: IncomingMessage): void => {
    const allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`];
    if (!allowedHosts.includes(req.headers.host ?? '')) throw new Refused(421, 'wrong Host');
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedHosts.some((h) => origin === `http://${h}`)) throw new Refused(403, 'foreign Origin');
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') throw new Refused(403, 'cross-site request');
    if (req.method === 'POST' && origin === undefined) throw new Refused(403, 'a pick needs an Origin');
  };

  const page = async (): Promise<string> => {
    const rows = [...options.live.rows.values()];
    // One spend everywhere (client/spend.ts): the rewrites no row counts are the job's spend too.
    const all = options.live.allRows;
    const calls = (await options.rewriteCalls?.()) ?? [];
    const spend = options.estimate ? spendOf(all, options.estimate, notInRows(calls, all)) : undefined;
    return renderReport({
      ...(spend ? { spend } : {}),
      job: options.job,
      generatedAt: new Date(),
      rows,
      summary: summarize(rows),
      media: options.live.media,
      ffmpeg: options.ffmpeg,
      picks: options.live.picks,
      earlier: options.live.earlier(),
      ...(options.live.lastReviewAt !== undefined ? { lastReviewAt: options.live.lastReviewAt } : {}),
      live: true,
      version: options.live.version,
      films: options.live.films,
      ...(options.chains?.length ? { chains: options.chains } : {}),
    });
  };

  const ctx = (): TileContext => ({
    media: options.live.media,
    picks: options.live.picks,
    lastReviewAt: options.live.lastReviewAt,
    ffmpeg: options.ffmpeg,
  });

  const eventFor = (change: LiveChange): string => {
    if (change.kind === 'pick') {
      const { key, file, verdict, note } = change.pick;
      return `id: ${change.version}\nevent: pick\ndata: ${JSON.stringify({ key, file, verdict, note })}\n\n`;
    }
    const row = options.live.rows.get(change.key);
    if (!row) return '';
    // The whole prompt row: a take rendered again keeps its earlier, picked render beside it.
    const prompt = promptOf(row);
    const shown = promptRows(
      options.live.promptRows(change.key),
      options.live.earlier().filter((r) => promptOf(r) === prompt),
    )[0];
    const take = { key: row.key, rowId: rowId(prompt), row: shown ? renderPromptRow(shown, ctx()) : '' };
    return `id: ${change.version}\nevent: take\ndata: ${JSON.stringify(take)}\n\n`;
  };

  const summaryEvent = (): string => {
    const rows = [...options.live.rows.values()];
    const c = ctx();
    const data = {
      rows: rows.length,
      stats: statsFor(rows, { shown: [...rows, ...options.live.earlier()], picks: c.picks, fresh: rows.filter((r) => isNew(r, c)).length }),
      failures: renderFailures(rows),
      filters: renderFilters(rows),
      sub: `${rows.length} take${rows.length === 1 ? '' : 's'} so far`,
    };
    return `event: summary\ndata: ${JSON.stringify(data)}\n\n`;
  };

  const unsubscribe = options.live.subscribe((change) => {
    const text = eventFor(change) + (change.kind === 'take' ? summaryEvent() : '');
    for (const res of streams) res.write(text);
  });

  const openEvents = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const fromHeader = Number(req.headers['last-event-id']);
    const fromQuery = Number(url.searchParams.get('since'));
    const since = Number.isInteger(fromHeader) && fromHeader > 0 ? fromHeader : Number.isInteger(fromQuery) ? fromQuery : 0;
    res.writeHead(200, { ...headers('text/event-stream; charset=utf-8'), connection: 'keep-alive' });
    res.write(': reelflow review\n\n');
    const missed = options.live.since(since);
    if (missed.length > 0) res.write(missed.map(eventFor).join('') + summaryEvent());
    streams.add(res);
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    req.on('close', () => {
      clearInterval(keepalive);
      streams.delete(res);
    });
  };

  const readBody = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve, reject) => {
      let size = 0;
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          reject(new Refused(413, `a pick is at most ${MAX_BODY_BYTES} bytes`));
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });

  const postPick = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) throw new Refused(415, 'a pick is sent as application/json');
    let input: { key?: unknown; file?: unknown; verdict?: unknown; note?: unknown };
    try {
      input = JSON.parse(await readBody(req)) as typeof input;
    } catch (error) {
      if (error instanceof Refused) throw error;
      throw new Refused(400, 'a pick is a JSON object');
    }
    if (typeof input?.key !== 'string' || !options.live.rows.has(input.key)) throw new Refused(400, '"key" must be a take of this job');
    if (input.file !== undefined && typeof input.file !== 'string')
      throw new Refused(400, '"file" must be the file of a render of that take');
    // The pick names the render that was seen: its file and sha256 (docs/takes.md).
    const render = options.live.renderFor(input.key, input.file);
    if (!render) throw new Refused(400, '"file" must be the file of a render of that take');
    const verdict = input.verdict as Verdict;
    if (verdict !== 'keep' && verdict !== 'reject' && verdict !== 'clear')
      throw new Refused(400, '"verdict" must be keep, reject or clear');
    if (input.note !== undefined && (typeof input.note !== 'string' || input.note.length > MAX_NOTE_CHARS)) {
      throw new Refused(400, `"note" must be text of at most ${MAX_NOTE_CHARS} characters`);
    }
    const note = typeof input.note === 'string' && input.note.trim() !== '' && verdict !== 'clear' ? input.note : undefined;
    const pick = pickOn(render, verdict, new Date().toISOString(), note);
    const saved = await options.live.decide(pick);
    res.writeHead(200, headers('application/json')).end(JSON.stringify(saved));
  };

  /** A stored video or poster, with byte ranges (browsers seek in media with them). */
  const sendFile = async (req: IncomingMessage, res: ServerResponse, name: string): Promise<void> => {
    const kind = options.live.servable(name);
    if (!kind) throw new Refused(404, 'not a video or poster of this job');
    // Posters, and videos of a local output, are read from disk, never through a link.
    const dir = kind === 'poster' ? options.live.posterDir : options.localDir;
    const source = dir ? await localSource(dir, name) : await remoteSource(name);
    try {
      const type = CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1).toLowerCase()] ?? 'application/octet-stream';
      const base = { ...headers(type), 'accept-ranges': 'bytes', 'cache-control': 'private, max-age=60' };
      const { size } = source;
      const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
      let start = 0;
      let end = size - 1;
      if (range && (range[1] || range[2])) {
        start = range[1] ? Number(range[1]) : Math.max(0, size - Number(range[2]));
        end = range[1] && range[2] ? Math.min(Number(range[2]), end) : end;
        if (start > end || start >= size) {
          res.writeHead(416, { ...base, 'content-range': `bytes */${size}` }).end();
          return;
        }
        res.writeHead(206, { ...base, 'content-range': `bytes ${start}-${end}/${size}`, 'content-length': String(end - start + 1) });
      } else {
        res.writeHead(200, { ...base, 'content-length': String(size) });
      }
      if (req.method === 'HEAD' || size === 0) {
        res.end();
        return;
      }
      const stream = await source.read(start, end);
      await new Promise<void>((resolve) => {
        stream.on('error', () => res.destroy());
        res.on('close', () => {
          stream.destroy();
          resolve();
        });
        stream.pipe(res);
      });
    } finally {
      await source.close();
    }
  };

  const localSource = async (dir: string, name: string): Promise<FileSource> => {
    let fh: FileHandle;
    try {
      fh = await openUnder(dir, name, 'read');
    } catch {
      throw new Refused(404, 'not stored');
    }
    const size = (await fh.stat()).size;
    return {
      size,
      read: (start, end) => Promise.resolve(fh.createReadStream({ start, end, autoClose: false })),
      close: () => fh.close(),
    };
  };

  const remoteSource = async (name: string): Promise<FileSource> => {
    const storage = options.storage;
    const stored = storage?.readObject ? await storage.stat(name) : undefined;
    if (!storage?.readObject || !stored) throw new Refused(404, 'not stored');
    return {
      size: stored.bytes,
      read: async (start, end) => {
        const body = await storage.readObject!(name, { start, end });
        if (!body) throw new Refused(404, 'not stored');
        return body;
      },
      close: () => Promise.resolve(),
    };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    checkOrigin(req);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const raw = url.pathname.split('/');
    // raw[0] is '' (before the first slash); raw[1] must be the token.
    if (raw.length < 3 || !sameText(raw[1] ?? '', token)) throw new Refused(403, 'this address needs the token printed by reelflow review');
    const rest = raw.slice(2);
    const route = rest.join('/');
    if (req.method === 'POST') {
      if (route !== 'picks') throw new Refused(404, 'not found');
      await postPick(req, res);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new Refused(405, 'method not allowed');
    if (route === '' && !options.live.ready) {
      // Posters first (docs/review.md): a page served before they are made would show empty frames.
      res
        .writeHead(200, { ...headers('text/html; charset=utf-8'), 'content-security-policy': "default-src 'none'; frame-ancestors 'none'" })
        .end(
          `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="1"><title>reelflow review</title><p style="font:16px system-ui;margin:2em">Making poster frames: ${options.live.media.size} so far. This page opens by itself when they are ready.</p>`,
        );
      return;
    }
    if (route === '') {
      res
        .writeHead(200, {
          ...headers('text/html; charset=utf-8'),
          'content-security-policy': `${pagePolicy(true)}; frame-ancestors 'none'`,
        })
        .end(await page());
      return;
    }
    if (route === 'events') {
      openEvents(req, res, url);
      return;
    }
    let segments: string[];
    try {
      segments = rest.map((s) => decodeURIComponent(s));
    } catch {
      throw new Refused(400, 'bad path');
    }
    if (segments.some((s) => s === '' || s === '.' || s === '..' || /[\\/\0]/.test(s))) throw new Refused(400, 'bad path');
    await sendFile(req, res, segments.join('/'));
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const status = error instanceof Refused ? error.status : 500;
      const message = error instanceof Refused ? error.message : 'internal error';
      if (!res.headersSent) res.writeHead(status, headers('text/plain; charset=utf-8'));
      res.end(`${message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/${token}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        unsubscribe();
        for (const res of streams) res.end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
