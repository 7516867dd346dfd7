// Counters behind GET /__sim/stats. Plain objects with string keys: cheap to bump, cheap to JSON.
import { createHash } from 'node:crypto';
import type { SimStats } from './contract';

export interface SimStatsExt extends SimStats {
  /** Injected faults by name, e.g. "429-empty", "reset-before-read", "cut-download", "port-hang". */
  faults: Record<string, number>;
  /** Messages requests by how the key came: "x-api-key", "bearer", "none". */
  messagesAuth: Record<string, number>;
  anthropicVersions: Record<string, number>;
  cdnRequests: number;
  tasksCreated: number;
  /** Prompts whose create was processed but whose answer was lost (the lost-create fault), by count. */
  lostCreatesByPrompt: Record<string, number>;
  /**
   * With a refresh interval: per task, the status checks each refresh round's reading got (index 0:
   * before the first round read the task). More than one check of a reading learned nothing new.
   */
  checksByReading: Record<string, number[]>;
  /** Per prompt, the seed of each create that carried one, in order (takes, docs/takes.md). */
  seedsByPrompt: Record<string, number[]>;
  /**
   * Per prompt, each create's metadata.content as received: each item's role and the sha256 of the
   * bytes its `data:` URL carried (absent for an address), so tests see which frame a shot started from.
   */
  contentByPrompt: Record<string, Array<Array<{ role: string; sha256?: string }>>>;
  /** Most renders in flight at once (created, not yet finished on the simulator's clock). */
  peakRendersInFlight: number;
  /** When each create was accepted (ms since the epoch), oldest first; the last 1,000. */
  createTimes: number[];
  /** Provider callbacks (sim/callbacks.ts): sent by kind, faults applied, answers by status. */
  callbacks: Record<string, number>;
  /** Answers to sent callbacks by kind (final, running, forged) and status, e.g. "forged 401". */
  callbackAnswers: Record<string, number>;
}

const CREATE_TIMES_KEPT = 1_000;

const bump = (m: Record<string, number>, k: string, by = 1): void => {
  m[k] = (m[k] ?? 0) + by;
};

export class StatsRecorder {
  createsByPrompt: Record<string, number> = {};
  lostCreatesByPrompt: Record<string, number> = {};
  requests: Record<string, number> = {};
  requestsByPort: Record<string, number> = {};
  pollsByTask: Record<string, number> = {};
  checksByReading: Record<string, number[]> = {};
  seedsByPrompt: Record<string, number[]> = {};
  contentByPrompt: Record<string, Array<Array<{ role: string; sha256?: string }>>> = {};
  faults: Record<string, number> = {};
  messagesAuth: Record<string, number> = {};
  anthropicVersions: Record<string, number> = {};
  cdnRequests = 0;
  bytesServed = 0;
  cdnAuthHeadersSeen = 0;
  tasksCreated = 0;
  peakRendersInFlight = 0;
  createTimes: number[] = [];
  callbacks: Record<string, number> = {};
  callbackAnswers: Record<string, number> = {};
  /** When each render in flight finishes. */
  private renderEnds: number[] = [];

  request(endpoint: string, port: number): void {
    bump(this.requests, endpoint);
    bump(this.requestsByPort, String(port));
  }
  /** CDN requests count per endpoint but not per port: requestsByPort is about base addresses. */
  cdnRequest(method: string): void {
    bump(this.requests, `${method} cdn`);
    this.cdnRequests++;
  }
  create(prompt: string, render?: { createdAt: number; renderMs: number }, seed?: number): void {
    bump(this.createsByPrompt, prompt);
    if (seed !== undefined) (this.seedsByPrompt[prompt] ??= []).push(seed);
    this.tasksCreated++;
    if (!render) return;
    this.renderEnds = this.renderEnds.filter((end) => end > render.createdAt);
    this.renderEnds.push(render.createdAt + render.renderMs);
    this.peakRendersInFlight = Math.max(this.peakRendersInFlight, this.renderEnds.length);
    this.createTimes.push(render.createdAt);
    if (this.createTimes.length > CREATE_TIMES_KEPT) this.createTimes.shift();
  }
  content(prompt: string, content: unknown): void {
    if (!Array.isArray(content)) return;
    const items = content.map((item: Record<string, unknown>) => {
      const type = String(item['type']);
      const url = (item[type] as { url?: unknown } | undefined)?.url;
      const data = typeof url === 'string' ? /^data:[^,]*;base64,(.*)$/s.exec(url) : null;
      const sha256 = data ? createHash('sha256').update(Buffer.from(data[1]!, 'base64')).digest('hex') : undefined;
      return { role: String(item['role']), ...(sha256 ? { sha256 } : {}) };
    });
    (this.contentByPrompt[prompt] ??= []).push(items);
  }
  lostCreate(prompt: string): void {
    this.fault('lost-create');
    bump(this.lostCreatesByPrompt, prompt);
  }
  poll(id: string): void {
    bump(this.pollsByTask, id);
  }
  /** A status check answered with the reading of refresh round `round` (see refresh.ts). */
  checkedReading(id: string, round: number): void {
    const counts = (this.checksByReading[id] ??= []);
    while (counts.length <= round) counts.push(0);
    counts[round] = (counts[round] ?? 0) + 1;
  }
  callback(name: string): void {
    bump(this.callbacks, name);
  }
  callbackAnswered(kind: string, status: number): void {
    bump(this.callbackAnswers, `${kind} ${status}`);
  }
  fault(name: string): void {
    bump(this.faults, name);
  }
  messages(scheme: string, version: string | undefined): void {
    bump(this.messagesAuth, scheme);
    if (version) bump(this.anthropicVersions, version);
  }
  snapshot(): SimStatsExt {
    // Copies, so callers can keep a snapshot and compare it with a later one.
    return {
      createsByPrompt: { ...this.createsByPrompt },
      lostCreatesByPrompt: { ...this.lostCreatesByPrompt },
      requests: { ...this.requests },
      requestsByPort: { ...this.requestsByPort },
      pollsByTask: { ...this.pollsByTask },
      checksByReading: Object.fromEntries(Object.entries(this.checksByReading).map(([id, counts]) => [id, [...counts]])),
      seedsByPrompt: Object.fromEntries(Object.entries(this.seedsByPrompt).map(([prompt, seeds]) => [prompt, [...seeds]])),
      contentByPrompt: structuredClone(this.contentByPrompt),
      bytesServed: this.bytesServed,
      cdnAuthHeadersSeen: this.cdnAuthHeadersSeen,
      cdnRequests: this.cdnRequests,
      tasksCreated: this.tasksCreated,
      peakRendersInFlight: this.peakRendersInFlight,
      createTimes: [...this.createTimes],
      callbacks: { ...this.callbacks },
      callbackAnswers: { ...this.callbackAnswers },
      faults: { ...this.faults },
      messagesAuth: { ...this.messagesAuth },
      anthropicVersions: { ...this.anthropicVersions },
    };
  }
}
