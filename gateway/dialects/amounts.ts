// Reading numbers out of a gateway's published prices: every byte is the gateway's, so an entry is
// taken only when it is a plain map and an amount only when it is a sane number.

/** At most this many entries of a published list are read. */
export const MAX_ENTRIES = 20_000;
/** No published price above this is believed (USD per second, per video or per call). */
const MAX_USD = 10_000;

export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A published amount: a finite number from 0 to MAX_USD, else undefined. */
export function amount(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_USD ? v : undefined;
}
