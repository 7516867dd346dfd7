// Seeded randomness. Faults and render times must replay identically for a given seed, so nothing in
// sim/ calls Math.random(). Each fault kind draws from its own stream: turning one fault on must not
// shift the decisions of another.

/** mulberry32: tiny, fast, good enough for test-fault dice. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a: derives a per-stream seed from the user seed and a stream name. */
export function hashString(s: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export class Dice {
  private readonly streams = new Map<string, () => number>();
  constructor(private readonly seed: number) {}

  /** Next float in [0,1) from the named stream. */
  next(stream: string): number {
    let s = this.streams.get(stream);
    if (!s) {
      s = mulberry32(hashString(stream, this.seed));
      this.streams.set(stream, s);
    }
    return s();
  }

  /** true with probability `rate`; rates of 0 and 1 consume no draw, so they stay exact. */
  chance(stream: string, rate: number | undefined): boolean {
    if (!rate || rate <= 0) return false;
    if (rate >= 1) return true;
    return this.next(stream) < rate;
  }

  /** Integer in [min, max]. */
  between(stream: string, min: number, max: number): number {
    if (max <= min) return min;
    return min + Math.floor(this.next(stream) * (max - min + 1));
  }

  pick<T>(stream: string, items: readonly T[]): T {
    const i = Math.floor(this.next(stream) * items.length);
    return items[Math.min(i, items.length - 1)] as T;
  }
}
