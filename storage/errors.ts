import { StorageError } from './storage';

/**
 * A write ended with a different byte count than `expectedBytes`. When fewer bytes arrived
 * (`kept`), the local backend keeps them as a partial write that a later attempt can resume.
 */
export class SizeMismatchError extends StorageError {
  constructor(
    readonly objectName: string,
    readonly expected: number,
    readonly received: number,
    readonly kept: boolean,
  ) {
    super(
      `${objectName}: expected ${expected} bytes, received ${received}` +
        (kept ? ' (the partial write is kept for a resumed attempt)' : ' (nothing was kept)'),
    );
  }
}

/** More bytes arrived than the job allows for one video (output.max_bytes); nothing was kept. */
export class TooLargeError extends StorageError {
  constructor(
    readonly objectName: string,
    readonly maxBytes: number,
  ) {
    super(`${objectName}: the body went past ${maxBytes} bytes (output.max_bytes) and was cut; nothing was kept`);
  }
}

/** Node's errno code of an error, when it has one. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
