// An outage as three kinds of log line instead of one line per failed call: when it starts, a count
// at most every `everyMs` while it lasts, and when it ends (docs/logs.md). Used for Temporal (Core's
// forwarded retry lines, worker/runtime.ts) and for each gateway base address (activities/context.ts).
// Pure: the caller gives the clock and where lines go.

/** At most one line per this many ms while Temporal or a gateway address stays unreachable. */
export const OUTAGE_REPORT_MS = 30_000;

export interface OutageLine {
  phase: 'started' | 'continues' | 'ended';
  /** Failures seen since the outage started. */
  failures: number;
  /** Seconds since the outage started (whole seconds, for the reader). */
  seconds: number;
  /** The first failure's reason, on the start line. */
  reason?: string;
}

export interface OutageLogOptions {
  everyMs: number;
  emit: (line: OutageLine) => void;
  now?: () => number;
}

export class OutageLog {
  private startedAt: number | undefined;
  private lastLineAt = 0;
  private failures = 0;
  private readonly now: () => number;

  constructor(private readonly options: OutageLogOptions) {
    this.now = options.now ?? Date.now;
  }

  get open(): boolean {
    return this.startedAt !== undefined;
  }

  /** A failure: starts the outage, or counts it (and says so when `everyMs` has passed since the last line). */
  failed(reason?: string): void {
    const now = this.now();
    this.failures += 1;
    if (this.startedAt === undefined) {
      this.startedAt = now;
      this.lastLineAt = now;
      this.options.emit({ phase: 'started', failures: 1, seconds: 0, ...(reason === undefined ? {} : { reason }) });
      return;
    }
    if (now - this.lastLineAt >= this.options.everyMs) this.line('continues', now);
  }

  /** A success: ends the outage if there is one. */
  recovered(): void {
    if (this.startedAt === undefined) return;
    this.line('ended', this.now());
    this.startedAt = undefined;
    this.failures = 0;
  }

  private line(phase: 'continues' | 'ended', now: number): void {
    this.lastLineAt = now;
    this.options.emit({ phase, failures: this.failures, seconds: Math.round((now - this.startedAt!) / 1000) });
  }
}

/**
 * The same warning again and again, such as Core's TMPRL1104 for every slow workflow task while a
 * gateway is down: the first is written, then at most one per `everyMs`, which says how many of
 * its kind were left out since (`repeated`). What is left out may still be written at debug.
 */
export class RepeatedLines {
  private readonly seen = new Map<string, { lastAt: number; left: number }>();

  constructor(
    private readonly everyMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  admit(kind: string): { write: boolean; repeated: number } {
    const now = this.now();
    const seen = this.seen.get(kind);
    if (seen && now - seen.lastAt < this.everyMs) {
      seen.left += 1;
      return { write: false, repeated: seen.left };
    }
    if (this.seen.size >= 1_000) this.seen.clear(); // kinds are few; a bound all the same
    this.seen.set(kind, { lastAt: now, left: 0 });
    return { write: true, repeated: seen?.left ?? 0 };
  }
}
