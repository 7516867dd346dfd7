// Errors that end a command with a known exit status (spec/cli.md, "Exit status").

/** Temporal, every gateway address, or storage is unreachable: exit 3. */
export class InfrastructureError extends Error {
  override readonly name = 'InfrastructureError';
  readonly exitCode = 3;
}

/** Bad usage or input; nothing was started: exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly exitCode = 2;
}
