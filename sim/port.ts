// One base address: a node:http listener whose mode can change at run time. 'refuse' closes the
// listener (clients get ECONNREFUSED); '502'/'503' answer every request like a proxy whose upstream
// is down; 'hang' accepts and never answers. /__sim/* is exempt from all of it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PortMode } from './contract';
import type { SimContext } from './context';
import { sendInjectedError, sendRateLimited } from './faults';
import { BodyTooLarge, anthropicError, nginxPage, openaiError, readBody, sendJson, sendText, sleep } from './http';
import { sendNotFound } from './litellm-errors';
import { isNewApi, type SimProfile } from './profile';
import { matchRoute } from './routes';

/** What each gateway answers for a path it has no route for. */
function sendNoRoute(profile: SimProfile, res: ServerResponse, method: string, path: string): void {
  // LiteLLM is a FastAPI app; new-api serves its web console's page for anything outside its API.
  if (profile === 'litellm') return sendNotFound(res);
  if (isNewApi(profile) && !path.startsWith('/v1/') && !path.startsWith('/api/')) {
    return sendText(res, 200, '<!doctype html><html><head><title>New API</title></head><body></body></html>', 'text/html; charset=utf-8');
  }
  sendJson(res, 404, openaiError(`Invalid URL (${method} ${path})`, 'invalid_request_error', ''));
}

export type ControlHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

export class GatewayPort {
  mode: PortMode = 'up';
  port: number;
  private server: Server | undefined;
  /** Every server this port ever had: a refused port keeps finishing its in-flight requests. */
  private readonly servers = new Set<Server>();

  constructor(
    private readonly ctx: SimContext,
    private readonly host: string,
    port: number,
    private readonly control: ControlHandler,
  ) {
    this.port = port;
  }

  get base(): string {
    return `http://${this.host}:${this.port}`;
  }

  async start(mode: PortMode): Promise<void> {
    await this.listen();
    if (mode !== 'up') await this.setMode(mode);
  }

  private async listen(): Promise<void> {
    const server = createServer((req, res) => this.onRequest(req, res));
    // Clients poll over keep-alive connections; keep them longer than typical client idle timeouts.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.requestTimeout = 0; // hang mode must really hang
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    this.servers.add(server);
    server.on('close', () => this.servers.delete(server));
  }

  async setMode(mode: PortMode): Promise<void> {
    const wasRefusing = this.mode === 'refuse';
    this.mode = mode;
    if (mode === 'refuse' && !wasRefusing && this.server) {
      const s = this.server;
      this.server = undefined;
      s.close();
      s.closeIdleConnections();
    } else if (mode !== 'refuse' && wasRefusing) {
      await this.listen();
    }
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.servers].map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
    this.server = undefined;
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    this.dispatch(req, res).catch((e: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendJson(res, 500, openaiError(`simulator error: ${(e as Error).message}`, 'new_api_error', 'internal_error'));
    });
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { ctx } = this;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path.startsWith('/__sim/')) return this.control(req, res, path);
    // A listener that is being closed finishes what it has, then drops the connection.
    if (this.mode === 'refuse') res.setHeader('connection', 'close');
    if (this.mode === '502' || this.mode === '503') {
      ctx.stats.fault(`port-${this.mode}`);
      req.resume();
      return sendText(res, Number(this.mode), nginxPage(Number(this.mode)), 'text/html');
    }
    if (this.mode === 'hang') {
      ctx.stats.fault('port-hang');
      req.resume();
      return;
    }
    const method = req.method ?? 'GET';
    const m = matchRoute(method, path, ctx.cfg.profile, ctx.cfg.publishedPrices !== undefined);
    if (!m) {
      // Counted by what was asked, so a test can tell a probe of a route this gateway lacks.
      ctx.stats.request(`other ${method} ${path.slice(0, 64)}`, this.port);
      req.resume();
      return sendNoRoute(ctx.cfg.profile, res, method, path);
    }
    const { route, id } = m;
    ctx.stats.request(route.name, this.port);
    const fault = ctx.faults.decide(route.kind);
    if (fault?.kind === 'reset' && fault.when === 'before-read') {
      ctx.stats.fault('reset-before-read');
      req.socket.resetAndDestroy();
      return;
    }
    let body: Buffer = Buffer.alloc(0);
    if (method === 'POST') {
      try {
        body = await readBody(req, ctx.cfg.maxBodyBytes);
      } catch (e) {
        if (!(e instanceof BodyTooLarge)) throw e;
        const msg = `request body too large (limit ${ctx.cfg.maxBodyBytes} bytes)`;
        // Stop reading and close after answering, as the real front proxy does.
        res.setHeader('connection', 'close');
        return sendJson(
          res,
          413,
          route.kind === 'messages'
            ? anthropicError('request_too_large', msg)
            : openaiError(msg, 'invalid_request_error', 'request_too_large'),
        );
      }
    }
    if (fault?.kind === 'reset') {
      ctx.stats.fault('reset-after-read');
      req.socket.resetAndDestroy();
      return;
    }
    const slow = ctx.faults.slowMs(route.kind);
    if (slow > 0) await sleep(slow);
    if (fault?.kind === 'rate-limit') {
      ctx.stats.fault(`429-${fault.variant}`);
      return sendRateLimited(res, fault.variant, route.kind === 'messages', ctx.cfg.profile);
    }
    if (fault?.kind === 'error') {
      ctx.stats.fault(`${fault.status}-${fault.html ? 'html' : 'json'}`);
      return sendInjectedError(res, fault.status, fault.html, route.kind === 'messages', ctx.cfg.profile);
    }
    await route.handle({ req, res, ctx, base: this.base, id, body });
  }
}
