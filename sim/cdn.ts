// A separate "CDN" listener for result_url, like a pre-signed storage URL: it refuses requests that
// carry an Authorization header (403, as S3 does when a signed URL also gets a bearer token), checks
// a signature and an expiry, and supports ranges. Clients must never send the gateway key here.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimContext } from './context';
import { serveVideo } from './content';
import { sendText } from './http';
import { viewAt } from './tasks';

const s3Error = (code: string, message: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>\n`;

export class Cdn {
  url = '';
  private server: Server | undefined;
  private readonly secret: Buffer;

  constructor(private readonly ctx: SimContext) {
    this.secret = createHmac('sha256', 'reelflow-sim').update(String(ctx.cfg.seed)).digest();
  }

  private sign(id: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${id}:${expires}`).digest('hex').slice(0, 32);
  }

  /** The task's last frame, a PNG (sim/frames.ts), signed like its video. */
  signedFrameUrl(id: string): string {
    const expires = this.ctx.now() + this.ctx.cfg.cdnUrlTtlMs;
    return `${this.url}/frames/${id}-last.png?expires=${expires}&signature=${this.sign(`${id}-last.png`, expires)}`;
  }

  /** A fresh URL per status check; it stops working cdnUrlTtlMs later. */
  signedUrl(id: string): string {
    const expires = this.ctx.now() + this.ctx.cfg.cdnUrlTtlMs;
    return `${this.url}/videos/${id}.mp4?expires=${expires}&signature=${this.sign(id, expires)}`;
  }

  async start(host: string, port: number): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch(() => {
        if (!res.headersSent) sendText(res, 500, s3Error('InternalError', 'internal error'), 'application/xml');
        else res.destroy();
      });
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    const a = server.address() as AddressInfo;
    this.url = `http://${host}:${a.port}`;
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { ctx } = this;
    ctx.stats.cdnRequest(req.method ?? 'GET');
    if (req.headers.authorization !== undefined) {
      ctx.stats.cdnAuthHeadersSeen++;
      return sendText(
        res,
        403,
        s3Error(
          'AccessDenied',
          'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified',
        ),
        'application/xml',
      );
    }
    const url = new URL(req.url ?? '/', 'http://cdn.invalid');
    const m = /^\/videos\/([A-Za-z0-9_-]+)\.mp4$/.exec(url.pathname);
    const frame = /^\/frames\/([A-Za-z0-9_-]+)-last\.png$/.exec(url.pathname);
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !(m ?? frame)) {
      return sendText(res, 404, s3Error('NoSuchKey', 'The specified key does not exist.'), 'application/xml');
    }
    const id = (m ?? frame)?.[1] as string;
    const expires = Number(url.searchParams.get('expires'));
    const sig = Buffer.from(url.searchParams.get('signature') ?? '');
    const want = Buffer.from(this.sign(frame ? `${id}-last.png` : id, expires));
    if (!Number.isFinite(expires) || sig.length !== want.length || !timingSafeEqual(sig, want)) {
      return sendText(
        res,
        403,
        s3Error('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.'),
        'application/xml',
      );
    }
    if (ctx.now() > expires) return sendText(res, 403, s3Error('AccessDenied', 'Request has expired'), 'application/xml');
    const task = ctx.store.get(id);
    if (!task || viewAt(task, ctx.now()).status !== 'SUCCESS') {
      return sendText(res, 404, s3Error('NoSuchKey', 'The specified key does not exist.'), 'application/xml');
    }
    if (frame) {
      const png = await ctx.videos.lastFrame(task);
      if (!png) return sendText(res, 404, s3Error('NoSuchKey', 'The specified key does not exist.'), 'application/xml');
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
      res.end(req.method === 'HEAD' ? undefined : png);
      return;
    }
    const body = await ctx.videos.body(task);
    await serveVideo(req, res, body, ctx.faults, ctx.stats);
  }
}
