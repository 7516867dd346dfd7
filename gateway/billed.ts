// What a gateway says a create cost, where it says it (docs/costs.md, test/gateways/OBSERVED.md):
// LiteLLM answers every create with `x-litellm-response-cost`, USD, from its model cost map
// (1.106.2: 0.4 for a 4 s sora-2 at $0.10 a second). The header is untrusted: a plain decimal,
// short, finite and not negative, or nothing.
import type { IncomingHttpHeaders } from 'node:http';

const LITELLM_COST_HEADER = 'x-litellm-response-cost';
const MAX_CHARS = 32;
/** No single create costs more; a larger figure is not believed. */
const MAX_USD = 100_000;
const AMOUNT_RE = /^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]{1,3})?$/;

export function billedUsd(headers: IncomingHttpHeaders): number | undefined {
  const value = headers[LITELLM_COST_HEADER];
  if (typeof value !== 'string' || value.length > MAX_CHARS || !AMOUNT_RE.test(value.trim())) return undefined;
  const usd = Number(value.trim());
  return Number.isFinite(usd) && usd >= 0 && usd <= MAX_USD ? usd : undefined;
}
