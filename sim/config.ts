// Resolved simulator configuration: the contract's options plus defaults and the model catalog.
import type { PortMode, SimFaults, SimOptions } from './contract';
import { NEW_API_SERVER_ADDRESS, profileDefaults, type SimProfile } from './profile';

/** Faults beyond the contract's rates: which variant of a fault to produce, and where. */
export interface SimFaultsExt extends SimFaults {
  /** 429 variant; 'mixed' (default) rotates seconds, HTTP-date, no header, empty body. */
  rateLimitKind?: 'mixed' | 'retry-after-seconds' | 'retry-after-date' | 'no-retry-after' | 'empty';
  /** Statuses used by errorRate; default [500, 502, 503, 504]. */
  errorStatuses?: number[];
  /** Body of injected 5xx; 'mixed' (default) alternates JSON and a proxy's HTML page. */
  errorBody?: 'mixed' | 'json' | 'html';
  /** When resetRate resets: 'before-read' (body unread, nothing processed), 'after-read', or 'mixed'. */
  resetWhen?: 'mixed' | 'before-read' | 'after-read';
  /** Restrict rate/error/reset/slow faults to these endpoint kinds; default all. */
  scope?: EndpointKind[];
  /** Share of Messages streams that send an `error` event after the 200 headers. */
  streamErrorRate?: number;
  /**
   * new-api profiles: the fetch guard refuses the video's upstream address, so the content
   * endpoint answers 403 `{"error":{"message":"request blocked: port N is not allowed"}}` with this N.
   */
  fetchGuardPort?: number;
  /** Status answers carry `openai-poll-after-ms` with this value: a gateway's hint, however absurd. */
  pollAfterMs?: number;
  /** Renders whose prompt contains one of these fail (a chosen shot of a chain fails; docs/simulator.md). */
  failPrompts?: string[];
  /** Share of tasks whose final callback (metadata.callback_url, sim/callbacks.ts) is never sent. */
  callbackLostRate?: number;
  /** Share of tasks whose final callback comes callbackLateMs (default 2 s) after the task ended. */
  callbackLateRate?: number;
  callbackLateMs?: number;
  /** Share of tasks whose final callback is sent three times. */
  callbackDuplicateRate?: number;
  /** Share of tasks that also get a forged callback (wrong token) claiming success half-way through. */
  callbackForgedRate?: number;
  /** Share of tasks whose `running` callback comes after the final one. */
  callbackOutOfOrderRate?: number;
}

export type EndpointKind = 'create' | 'retrieve' | 'content' | 'messages';

export interface SimOptionsExt extends SimOptions {
  faults?: SimFaultsExt;
  /** Initial mode per port index (default all 'up'). */
  portModes?: PortMode[];
  /** Token group name reported in catalog errors. */
  group?: string;
  /** Port for the CDN listener (default 0 = any free port). */
  cdnPort?: number;
  /** With cdn: the gateway's /v1/videos/{id}/content answers 302 to the signed CDN URL. */
  contentRedirect?: boolean;
  /** Largest accepted request body; bigger ones get 413. Default 16 MiB. */
  maxBodyBytes?: number;
  /** Directory for generated MP4s; default $TMPDIR/reelflow-sim-cache. */
  cacheDir?: string;
  /** Path of ffmpeg; default /usr/bin/ffmpeg, then `ffmpeg` on PATH. null forces the shipped sample. */
  ffmpegPath?: string | null;
  /**
   * Default true: each video shows its prompt and seed (docs/simulator.md). false: one colour-bar
   * video per (seconds, size), for benchmarks whose thousands of prompts must not cost a render each.
   */
  distinctVideos?: boolean;
  /** Most MP4s kept in cacheDir (oldest removed first); default 256. */
  videoCacheFiles?: number;
  /** The gateway imitated (sim/profile.ts); default 'default', the gateway of docs/protocol.md. */
  profile?: SimProfile;
  /** new-api profiles: the operator's ServerAddress setting, named in addresses (default http://localhost:3000). */
  serverAddress?: string;
  /** How often task readings are refreshed from the upstream, ms; 0 = live. Default 15 000 for new-api, else 0. */
  refreshMs?: number;
  /** litellm profile: a proxy with a database answers a wrong key 401 (without one: 400 no_db_connection). */
  litellmDatabase?: boolean;
  /**
   * Prices this gateway publishes at new-api's `GET /api/pricing` (not the litellm profile): model ->
   * `model_price` (quota_type 1: USD per call). Unset: no such route.
   */
  publishedPrices?: Record<string, number>;
  /**
   * A Standard Webhooks secret (`whsec_...`): the simulator then receives reelflow's job events at
   * `POST /__sim/events/<name>`, signed with it (sim/events.ts). Unset: no event receiver.
   */
  eventSecret?: string;
}

export interface ModelInfo {
  kind: 'video' | 'messages';
  /** Default duration when the request gives none. */
  defaultSeconds: number;
  /** Render time when the options give none, ms. */
  renderMs: [number, number];
}

/** A realistic catalog: names as real catalogs spell them, date-like suffixes included. */
export const DEFAULT_CATALOG: Record<string, ModelInfo> = {
  'seedance-1-0-pro-250528': { kind: 'video', defaultSeconds: 5, renderMs: [30_000, 90_000] },
  'seedance-1-0-lite-t2v-250428': { kind: 'video', defaultSeconds: 5, renderMs: [20_000, 60_000] },
  // Seedance 2.0 renders 4-15 s, 5 by default; Veo 3.1 renders 4, 6 or 8 s, 8 by default.
  'doubao-seedance-2-0-260128': { kind: 'video', defaultSeconds: 5, renderMs: [40_000, 120_000] },
  'veo-3.1-fast-generate-001': { kind: 'video', defaultSeconds: 8, renderMs: [30_000, 75_000] },
  'veo-3.1-generate-001': { kind: 'video', defaultSeconds: 8, renderMs: [60_000, 180_000] },
  'veo-3.1-fast-generate-preview': { kind: 'video', defaultSeconds: 8, renderMs: [30_000, 75_000] },
  'kling-v2-1': { kind: 'video', defaultSeconds: 5, renderMs: [45_000, 150_000] },
  'claude-sonnet-4-6': { kind: 'messages', defaultSeconds: 0, renderMs: [0, 0] },
  'claude-haiku-4-5': { kind: 'messages', defaultSeconds: 0, renderMs: [0, 0] },
};

export const DEFAULT_KEY = 'sk-sim-local';

export interface SimConfig {
  profile: SimProfile;
  serverAddress: string;
  refreshMs: number;
  litellmDatabase: boolean;
  publishedPrices?: Record<string, number>;
  host: string;
  ports: number[];
  portModes: PortMode[];
  keys: Set<string>;
  group: string;
  catalog: Map<string, ModelInfo>;
  renderMs?: number | [number, number];
  videoBytes?: number;
  cdn: boolean;
  cdnPort: number;
  cdnUrlTtlMs: number;
  contentRedirect: boolean;
  maxBodyBytes: number;
  cacheDir?: string;
  ffmpegPath?: string | null;
  seed: number;
}

/** Unknown names (from --models) get video defaults unless they look like a Messages model. */
function infoFor(name: string): ModelInfo {
  const known = DEFAULT_CATALOG[name];
  if (known) return known;
  if (/^claude/i.test(name)) return { kind: 'messages', defaultSeconds: 0, renderMs: [0, 0] };
  return { kind: 'video', defaultSeconds: 5, renderMs: [20_000, 60_000] };
}

export function resolveConfig(o: SimOptionsExt): SimConfig {
  const profile = o.profile ?? 'default';
  const like = profileDefaults(profile);
  const ports = o.ports && o.ports.length > 0 ? o.ports : [0];
  const names = o.models && o.models.length > 0 ? o.models : (like.models ?? Object.keys(DEFAULT_CATALOG));
  return {
    profile,
    serverAddress: (o.serverAddress ?? NEW_API_SERVER_ADDRESS).replace(/\/+$/, ''),
    refreshMs: o.refreshMs ?? like.refreshMs,
    litellmDatabase: o.litellmDatabase ?? false,
    ...(o.publishedPrices ? { publishedPrices: o.publishedPrices } : {}),
    host: o.host ?? '127.0.0.1',
    ports,
    portModes: ports.map((_, i) => o.portModes?.[i] ?? 'up'),
    keys: new Set(o.keys && o.keys.length > 0 ? o.keys : [DEFAULT_KEY]),
    group: o.group ?? like.group ?? 'reelflow',
    catalog: new Map(names.map((n) => [n, infoFor(n)])),
    renderMs: o.renderMs,
    videoBytes: o.videoBytes,
    cdn: o.cdn ?? like.cdn ?? false,
    cdnPort: o.cdnPort ?? 0,
    cdnUrlTtlMs: o.cdnUrlTtlMs ?? 3_600_000,
    contentRedirect: o.contentRedirect ?? false,
    maxBodyBytes: o.maxBodyBytes ?? 16 * 1024 * 1024,
    cacheDir: o.cacheDir,
    ffmpegPath: o.ffmpegPath,
    seed: o.seed ?? 1,
  };
}
