// Field checks shared by both video protocols.

/** `seconds` is a string of digits; a JSON number is rejected like Go's decoder rejects it. */
export function validateSeconds(seconds: unknown): string | null {
  if (seconds === undefined) return null;
  if (typeof seconds === 'number') {
    return 'json: cannot unmarshal number into Go struct field TaskSubmitReq.seconds of type string';
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
