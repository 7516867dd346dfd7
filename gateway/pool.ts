// Which base address to use next. Pure policy with an injectable clock: no I/O, no timers.
//
// Primary first. A connection-level failure or 5xx puts a base in cooldown that doubles with each
// failure in a row (capped); when the cooldown ends the base is tried again (a probe): success
// clears its record, another failure doubles the cooldown. 429 is not a base failure.

/**
 * What the pool tells an observer (the worker's metrics and log): a base put in cooldown, the
 * traffic it had moving to another base, and a base that answers again after failures. Reported
 * once per step of back-off: the failures of calls that were in flight in the same outage add none.
 */
export type PoolEvent = CooldownEvent | FailoverEvent | RecoveredEvent;
export interface CooldownEvent {
  type: 'cooldown';
  baseUrl: string;
  cooldownMs: number;
  consecutiveFailures: number;
  /** The failure that caused it, as the retry engine described it (gateway text: untrusted). */
  reason?: string;
}
export interface RecoveredEvent {
  type: 'recovered';
  baseUrl: string;
  /** Back-off steps it had taken (consecutive failures before this success). */
  failures: number;
}
export interface FailoverEvent {
  type: 'failover';
  from: string;
  to: string;
}

export type PoolListener = (event: PoolEvent) => void;

export interface BaseUrlPoolOptions {
  /** Epoch ms; injected in tests. */
  now?: () => number;
  /** First cooldown, ms (default 5 000). */
  cooldownMs?: number;
  /** Cooldown cap, ms (default 120 000). */
  maxCooldownMs?: number;
  /** Told of cooldowns and failovers; a listener that throws is ignored. */
  onEvent?: PoolListener;
}

export interface BaseHealth {
  baseUrl: string;
  healthy: boolean;
  consecutiveFailures: number;
  /** Epoch ms when the base may be tried again (0 when healthy). */
  cooldownUntil: number;
}

interface Entry {
  failures: number;
  until: number;
}

export class BaseUrlPool {
  readonly baseUrls: readonly string[];
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly cooldownMs: number;
  private readonly maxCooldownMs: number;
  private readonly onEvent: PoolListener | undefined;

  constructor(baseUrls: readonly string[], options: BaseUrlPoolOptions = {}) {
    if (baseUrls.length === 0) throw new TypeError('BaseUrlPool needs at least one base address');
    this.baseUrls = [...new Set(baseUrls)];
    this.now = options.now ?? Date.now;
    this.cooldownMs = options.cooldownMs ?? 5_000;
    this.maxCooldownMs = options.maxCooldownMs ?? 120_000;
    this.onEvent = options.onEvent;
    for (const base of this.baseUrls) this.entries.set(base, { failures: 0, until: 0 });
  }

  private entry(baseUrl: string): Entry {
    const entry = this.entries.get(baseUrl);
    if (!entry) throw new TypeError(`unknown base address ${baseUrl}`);
    return entry;
  }

  isHealthy(baseUrl: string): boolean {
    return this.entry(baseUrl).until <= this.now();
  }

  /** The first healthy base in configured order; if all are cooling, the one whose cooldown ends first. */
  pick(exclude?: ReadonlySet<string>): string {
    return this.order(exclude)[0] ?? this.order()[0] ?? (this.baseUrls[0] as string);
  }

  /**
   * Bases in the order to try them: healthy ones in configured order, then cooling ones by the
   * end of their cooldown. `exclude` moves the given bases (e.g. ones that just failed) to the end.
   */
  order(exclude?: ReadonlySet<string>): string[] {
    const now = this.now();
    const rank = (base: string): [number, number, number] => {
      const e = this.entry(base);
      const excluded = exclude?.has(base) ? 1 : 0;
      return e.until <= now ? [excluded, 0, 0] : [excluded, 1, e.until];
    };
    const indexed = this.baseUrls.map((base, index) => ({ base, index, rank: rank(base) }));
    indexed.sort((a, b) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1] || a.rank[2] - b.rank[2] || a.index - b.index);
    return indexed.map((x) => x.base);
  }

  /** Ms until `baseUrl` leaves cooldown (0 when healthy). */
  cooldownRemaining(baseUrl: string): number {
    return Math.max(0, this.entry(baseUrl).until - this.now());
  }

  reportSuccess(baseUrl: string): void {
    const e = this.entry(baseUrl);
    if (e.failures > 0) this.notify({ type: 'recovered', baseUrl, failures: e.failures });
    e.failures = 0;
    e.until = 0;
  }

  /** A connection-level failure or 5xx. `minCooldownMs` honours a server's Retry-After. */
  reportFailure(baseUrl: string, minCooldownMs = 0, reason?: string): number {
    const e = this.entry(baseUrl);
    const now = this.now();
    if (e.until > now) {
      // Calls that were in flight when the base failed report it as well: one outage, one step of
      // back-off. Only a failure after the cooldown (a probe that fails) grows it.
      e.until = Math.max(e.until, now + minCooldownMs);
      return e.until - now;
    }
    e.failures += 1;
    const cooldown = Math.max(minCooldownMs, Math.min(this.maxCooldownMs, this.cooldownMs * 2 ** Math.min(e.failures - 1, 30)));
    e.until = this.now() + cooldown;
    this.notify({
      type: 'cooldown',
      baseUrl,
      cooldownMs: cooldown,
      consecutiveFailures: e.failures,
      ...(reason === undefined ? {} : { reason }),
    });
    // Calls now go to the first healthy base; with none healthy they wait, which is no failover.
    const next = this.pick();
    if (next !== baseUrl && this.isHealthy(next)) this.notify({ type: 'failover', from: baseUrl, to: next });
    return cooldown;
  }

  private notify(event: PoolEvent): void {
    try {
      this.onEvent?.(event);
    } catch {
      // Observing the pool must never change what it does.
    }
  }

  snapshot(): BaseHealth[] {
    const now = this.now();
    return this.baseUrls.map((baseUrl) => {
      const e = this.entry(baseUrl);
      return { baseUrl, healthy: e.until <= now, consecutiveFailures: e.failures, cooldownUntil: e.until <= now ? 0 : e.until };
    });
  }
}
