// How tests, benchmarks and the CLI start the simulator in-process. sim/ shares no code with gateway/.

export interface SimFaults {
  /** Share (0..1) of renders that end FAILURE with a reason. */
  failRate?: number;
  /** Share of requests answered 429 (mix of with/without Retry-After, empty body). */
  rateLimitRate?: number;
  /** Share of requests answered 500/502/503/504 (JSON or HTML bodies). */
  errorRate?: number;
  /** Share of requests whose connection is reset (before or after the request is read). */
  resetRate?: number;
  /** Share of downloads cut mid-body. */
  cutDownloadRate?: number;
  /** ms after creation during which retrieve answers 400 task_not_exist. */
  notExistWindowMs?: number;
  /** Share of creates that are processed but whose response is lost (connection destroyed). */
  lostCreateRate?: number;
  /** Extra latency per response, ms. */
  slowMs?: number;
  /** Answer unknown models with the real gateway's 503 model_not_found instead of 404. */
  modelNotFoundAs503?: boolean;
}

export type PortMode = 'up' | 'refuse' | '502' | '503' | 'hang';

export interface SimOptions {
  /** Ports for base addresses; 0 picks a free one. Default [0]. */
  ports?: number[];
  host?: string; // default 127.0.0.1
  keys?: string[];
  models?: string[];
  /** Render time in ms, fixed or [min, max]. */
  renderMs?: number | [number, number];
  /** Size in bytes of served videos (padded real MP4s). */
  videoBytes?: number;
  /** Serve result_url from a separate CDN listener that refuses Authorization. */
  cdn?: boolean;
  /** CDN URL lifetime, ms. */
  cdnUrlTtlMs?: number;
  faults?: SimFaults;
  /** Seed for fault and render-time randomness. */
  seed?: number;
}

export interface SimStats {
  createsByPrompt: Record<string, number>;
  requests: Record<string, number>;
  requestsByPort: Record<string, number>;
  pollsByTask: Record<string, number>;
  bytesServed: number;
  cdnAuthHeadersSeen: number;
  [more: string]: unknown;
}

export interface SimHandle {
  /** Base addresses, one per port, e.g. http://127.0.0.1:8787 */
  readonly urls: string[];
  readonly cdnUrl?: string;
  setFaults(faults: SimFaults): void;
  setPortMode(index: number, mode: PortMode): Promise<void>;
  stats(): SimStats;
  close(): Promise<void>;
}
