// Field checks shared by both video protocols.

import type { SimProfile } from './profile';

/** Go's decoder names the struct it decodes into: v0.10.0 decodes into an anonymous alias. */
const GO_STRUCT: Partial<Record<SimProfile, string>> = { 'new-api-0.10': '.Alias' };

/** `seconds` is a string of digits; a JSON number is rejected like Go's decoder rejects it. */
export function validateSeconds(seconds: unknown, profile: SimProfile = 'default'): string | null {
  if (seconds === undefined) return null;
  if (typeof seconds === 'number') {
    if (profile === 'litellm') return `Invalid type for 'seconds': expected a string, but got an integer instead.`;
    return `json: cannot unmarshal number into Go struct field ${GO_STRUCT[profile] ?? 'TaskSubmitReq'}.seconds of type string`;
  }
  if (typeof seconds !== 'string' || !/^\d{1,3}$/.test(seconds))
    return `invalid seconds ${JSON.stringify(seconds)}: expected a string of digits`;
  const n = Number(seconds);
  if (n < 1 || n > 120) return `seconds must be between 1 and 120, got ${n}`;
  return null;
}

export function validateSize(size: unknown): string | null {
  if (size === undefined) return null;
  if (typeof size !== 'string' || !/^\d{2,5}x\d{2,5}$/.test(size))
    return `invalid size ${JSON.stringify(size)}: expected WxH, e.g. 1280x720`;
  return null;
}
