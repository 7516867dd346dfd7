// grpc-js (the Temporal client's transport) gives the server's address as the TLS server name (SNI)
// even when it is an IP address, and Node then prints on the user's terminal, once per command:
// "DeprecationWarning: Setting the TLS ServerName to an IP address is not permitted by RFC 6066"
// (DEP0123). Nothing is wrong with the user's setup: the name is only a hint to the server, and the
// certificate is still checked against the address. Only that one warning is dropped.
let installed = false;

export function dropIpServerNameWarning(): void {
  if (installed) return;
  installed = true;
  const emitWarning = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((warning: unknown, ...rest: unknown[]) => {
    const options = rest[0];
    const code = options !== null && typeof options === 'object' ? (options as { code?: unknown }).code : rest[1];
    if (code === 'DEP0123') return;
    emitWarning(warning, ...rest);
  }) as typeof process.emitWarning;
}
