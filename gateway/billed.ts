// What a gateway says a create cost, in the header its record in gateway/dialects names (docs/costs.md;
// LiteLLM's `x-litellm-response-cost`, USD, from its model cost map). The header is untrusted: a plain decimal,
// short, finite and not negative, or nothing.
import type { IncomingHttpHeaders } from 'node:http';
import { BILLED_HEADERS } from './dialects';

const MAX_CHARS = 32;
/** No single create costs more; a larger figure is not believed. */
const MAX_USD = 100_000;
const AMOUNT_RE = /^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]{1,3})?$/;

export function billedUsd(headers: IncomingHttpHeaders): number | undefined {
  const value = BILLED_HEADERS.map((name) => headers[name]).find((v) => v !== undefined);
  if (typeof value !== 'string' || value.length > MAX_CHARS || !AMOUNT_RE.test(value.trim())) return undefined;
  const usd = Number(value.trim());
  return Number.isFinite(usd) && usd >= 0 && usd <= MAX_USD ? usd : undefined;
}
