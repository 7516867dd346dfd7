// The failure kinds of this layer. The Temporal service (embedded or configured) or the state
// directory it needs cannot be had: the CLI reports it with exit status 3 (cli/errors.ts).
export class TemporalUnavailableError extends Error {
  override readonly name = 'TemporalUnavailableError';
}

/** `--metrics`: the address is not HOST:PORT, or Prometheus metrics cannot be served there. The CLI reports it as bad usage (exit 2). */
export class MetricsAddressError extends Error {
  override readonly name = 'MetricsAddressError';
}
