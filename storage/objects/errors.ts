export class StorageError extends Error {
  override readonly name = 'StorageError';
  /** Another attempt would meet the same cause (a planted link, a file reelflow must not replace). */
  readonly final: boolean = false;
}

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

/**
 * A file is already stored under the name and reelflow did not write it (no manifest row with its
 * size and digest, and other bytes than the new video): it is the user's, and never replaced
 * unless the job says output.overwrite: true.
 */
export class ForeignFileError extends StorageError {
  override readonly final = true;
  constructor(readonly path: string) {
    super(
      `${path} already exists and reelflow did not write it (no manifest row has its size and digest): it is left as it is. ` +
        'Move it away, choose another output.name or output.dir, or set output.overwrite: true to replace it',
    );
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
