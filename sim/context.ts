// What every route handler gets: the shared state of one simulator (all ports see the same tasks).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallbackSender } from './callbacks';
import type { Cdn } from './cdn';
import type { EndpointKind, SimConfig } from './config';
import type { FaultEngine } from './faults';
import type { VideoLibrary } from './mp4';
import type { Dice } from './prng';
import type { StatsRecorder } from './stats';
import type { TaskStore } from './tasks';

export interface SimContext {
  cfg: SimConfig;
  store: TaskStore;
  videos: VideoLibrary;
  faults: FaultEngine;
  stats: StatsRecorder;
  dice: Dice;
  cdn?: Cdn;
  /** Calls the callback addresses creates carried (sim/callbacks.ts). */
  callbacks?: CallbackSender;
  /** When the simulator started: the refresh rounds of a slowly refreshing gateway count from here. */
  startedAt: number;
  now(): number;
}

export interface RouteCall {
  req: IncomingMessage;
  res: ServerResponse;
  ctx: SimContext;
  /** The base address this request came in on, e.g. http://127.0.0.1:8787 */
  base: string;
  /** Path parameter (task id) when the route has one. */
  id: string;
  /** The body, already read for POST routes (bounded by maxBodyBytes). */
  body: Buffer;
}

export interface Route {
  /** Stats key, e.g. "GET /v1/videos/:id". */
  name: string;
  kind: EndpointKind;
  handle(call: RouteCall): Promise<void> | void;
}
