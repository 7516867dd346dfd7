// The fleet's callback secret (docs/callbacks.md): the key of the tokens in callback addresses. Every
// worker that may receive a callback must hold the secret of the worker that made the create, so a
// fleet shares one: `$REELFLOW_CALLBACK_SECRET` (the same value in every worker's environment), else
// the file `callback-secret` beside the user's key settings, made at random on first use and
// readable by its owner alone. It is never the gateway key, and never leaves the worker.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { keySettingsPath } from '../jobfile/key-settings';

export const CALLBACK_SECRET_ENV = 'REELFLOW_CALLBACK_SECRET';
/** 128 bits at least: a shorter secret could be guessed from tokens seen in gateway logs. */
const MIN_SECRET_CHARS = 32;

export class CallbackSecretError extends Error {
  override name = 'CallbackSecretError';
}

export function callbackSecretPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(keySettingsPath(env)), 'callback-secret');
}

function checked(text: string, where: string): Buffer {
  const secret = text.trim();
  if (secret.length < MIN_SECRET_CHARS) {
    throw new CallbackSecretError(
      `${where}: the callback secret must be at least ${MIN_SECRET_CHARS} characters (e.g. \`openssl rand -hex 32\`)`,
    );
  }
  return Buffer.from(secret, 'utf8');
}

/** The secret from the environment, else from its file (made when missing); where it came from, for the worker's banner. */
export function callbackSecret(env: NodeJS.ProcessEnv = process.env): { secret: Buffer; source: string } {
  const fromEnv = env[CALLBACK_SECRET_ENV];
  if (fromEnv !== undefined && fromEnv !== '')
    return { secret: checked(fromEnv, `$${CALLBACK_SECRET_ENV}`), source: `$${CALLBACK_SECRET_ENV}` };
  const path = callbackSecretPath(env);
  makeIfMissing(path);
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new CallbackSecretError(
      `${path}: readable by others (mode ${mode.toString(8)}); \`chmod 600 ${path}\` or set $${CALLBACK_SECRET_ENV}`,
    );
  }
  return { secret: checked(readFileSync(path, 'utf8'), path), source: path };
}

/**
 * A random secret, written whole to a file of its own and then linked into place: two workers
 * starting at once keep the first one's, and neither reads a half-written file.
 */
function makeIfMissing(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(draft, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    linkSync(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new CallbackSecretError(`${path}: cannot create the callback secret: ${(error as Error).message}`);
    }
  } finally {
    rmSync(draft, { force: true });
  }
}
