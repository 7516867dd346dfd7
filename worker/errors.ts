// The one failure kind of this layer: the Temporal service (embedded or configured) or the state
// directory it needs cannot be had. The CLI reports it with exit status 3 (cli/errors.ts).
export class TemporalUnavailableError extends Error {
  override readonly name = 'TemporalUnavailableError';
}
