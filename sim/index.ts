// The gateway simulator: a real HTTP server speaking the whole gateway protocol (both video
// protocols and Messages) on several base addresses over one task store, with switchable faults.
// Written from the protocol alone (docs/protocol.md); it imports nothing from gateway/ so that it
// can catch the client's misreadings instead of sharing them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PortMode, SimHandle, SimOptions } from './contract';
import type { SimContext } from './context';
import { keyOf } from './catalog';
import { CallbackSender } from './callbacks';
import { Cdn } from './cdn';
import { type SimFaultsExt, type SimOptionsExt, resolveConfig } from './config';
import { EventInbox, type ReceivedEvent } from './events';
import { FaultEngine } from './faults';
import { readBody, sendJson } from './http';
import { VideoLibrary } from './mp4';
import { GatewayPort } from './port';
import { Dice } from './prng';
import type { SimProfile } from './profile';
import { StatsRecorder, type SimStatsExt } from './stats';
import { TaskStore } from './tasks';

export type { PortMode, SimFaults, SimHandle, SimOptions, SimStats } from './contract';
export type { EndpointKind, SimFaultsExt, SimOptionsExt } from './config';
export { isProfile, NEW_API_REFRESH_MS, NEW_API_SERVER_ADDRESS, PROFILES, type SimProfile } from './profile';
export type { SimStatsExt } from './stats';
export { DEFAULT_CATALOG, DEFAULT_KEY } from './config';
export { parseDuration, parseRate, parseRenderTime, parseSize } from './units';

export interface SimHandleExt extends SimHandle {
  setFaults(faults: SimFaultsExt): void;
  /** The keys accepted from now on: a key left out is refused as the profile's gateway refuses a disabled one. */
  setKeys(keys: string[]): void;
  stats(): SimStatsExt;
  /** The job events received at /__sim/events/<name> (with an event secret), once per webhook-id. */
  events(): ReceivedEvent[];
  /** Current faults after all merges. */
  faults(): SimFaultsExt;
  /** True when videos come from ffmpeg; false when the shipped sample is served. */
  readonly ffmpeg: boolean;
  /** The gateway this simulator imitates (sim/profile.ts). */
  readonly profile: SimProfile;
}

const EVENTS_PATH = '/__sim/events/';
const PORT_MODES: readonly PortMode[] = ['up', 'refuse', '502', '503', 'hang'];

export async function startSimulator(options: SimOptions | SimOptionsExt = {}): Promise<SimHandleExt> {
  const o = options as SimOptionsExt;
  const cfg = resolveConfig(o);
  const dice = new Dice(cfg.seed);
  const ctx: SimContext = {
    cfg,
    dice,
    store: new TaskStore(dice),
    videos: new VideoLibrary({
      cacheDir: cfg.cacheDir,
      ffmpegPath: cfg.ffmpegPath,
      videoBytes: cfg.videoBytes,
      distinct: o.distinctVideos,
      cacheFiles: o.videoCacheFiles,
    }),
    faults: new FaultEngine(o.faults, dice),
    stats: new StatsRecorder(),
    startedAt: Date.now(),
    now: () => Date.now(),
  };
  ctx.callbacks = new CallbackSender(ctx);
  const ports: GatewayPort[] = [];

  const setPortMode = async (index: number, mode: PortMode): Promise<void> => {
    const p = ports[index];
    if (!p) throw new Error(`no port with index ${index} (have ${ports.length})`);
    if (!PORT_MODES.includes(mode)) throw new Error(`unknown port mode ${String(mode)}`);
    await p.setMode(mode);
  };

  const inbox = new EventInbox(o.eventSecret);
  const control = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    // Job events come signed, not with a gateway key: the signature is their guard (sim/events.ts).
    if (req.method === 'POST' && path.startsWith(EVENTS_PATH)) return inbox.receive(req, res, path.slice(EVENTS_PATH.length));
    // The stats hold every prompt and the faults steer every answer: the key, like every route.
    const key = keyOf(req, true);
    if (key === undefined || !ctx.cfg.keys.has(key)) {
      req.resume();
      return sendJson(res, 401, { error: 'the simulator control endpoints need an accepted key (Authorization: Bearer <key>)' });
    }
    if (req.method === 'GET' && path === '/__sim/stats') return sendJson(res, 200, ctx.stats.snapshot());
    if (req.method === 'GET' && path === '/__sim/events') return sendJson(res, 200, { events: inbox.list() });
    if (req.method === 'GET' && path === '/__sim/faults') {
      return sendJson(res, 200, { faults: ctx.faults.faults, ports: ports.map((p) => ({ url: p.base, mode: p.mode })) });
    }
    if (req.method === 'POST' && path === '/__sim/faults') {
      let body: unknown;
      try {
        body = JSON.parse((await readBody(req, 1024 * 1024)).toString('utf8'));
      } catch (e) {
        return sendJson(res, 400, { error: `body must be JSON: ${(e as Error).message}` });
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return sendJson(res, 400, { error: 'body must be a JSON object' });
      }
      const b = body as Record<string, unknown>;
      if ('port' in b || 'mode' in b) {
        try {
          await setPortMode(Number(b['port']), b['mode'] as PortMode);
        } catch (e) {
          return sendJson(res, 400, { error: (e as Error).message });
        }
      } else {
        ctx.faults.merge(b as SimFaultsExt);
      }
      return sendJson(res, 200, { faults: ctx.faults.faults, ports: ports.map((p) => ({ url: p.base, mode: p.mode })) });
    }
    req.resume();
    return sendJson(res, 404, { error: `unknown simulator control ${req.method ?? ''} ${path}` });
  };

  let cdn: Cdn | undefined;
  try {
    if (cfg.cdn) {
      cdn = new Cdn(ctx);
      await cdn.start(cfg.host, cfg.cdnPort);
      ctx.cdn = cdn;
    }
    for (const [i, port] of cfg.ports.entries()) {
      const p = new GatewayPort(ctx, cfg.host, port, control);
      ports.push(p);
      await p.start(cfg.portModes[i] ?? 'up');
    }
  } catch (e) {
    await Promise.all(ports.map((p) => p.close()));
    await cdn?.close();
    throw e;
  }

  return {
    get urls() {
      return ports.map((p) => p.base);
    },
    cdnUrl: cdn?.url,
    ffmpeg: ctx.videos.usingFfmpeg,
    profile: cfg.profile,
    setFaults: (f: SimFaultsExt) => ctx.faults.merge(f),
    setKeys: (keys: string[]) => {
      ctx.cfg.keys.clear();
      for (const key of keys) ctx.cfg.keys.add(key);
    },
    faults: () => ({ ...ctx.faults.faults }),
    setPortMode,
    stats: () => ctx.stats.snapshot(),
    events: () => inbox.list(),
    close: async () => {
      ctx.callbacks?.close();
      await Promise.all(ports.map((p) => p.close()));
      await cdn?.close();
    },
  };
}
