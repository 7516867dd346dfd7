import { accessSync, constants, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { TemporalUnavailableError } from './errors';

/** `$REELFLOW_STATE_DIR`, default `~/.local/state/reelflow` (XDG state home when set). */
export function stateDirectory(env: NodeJS.ProcessEnv = process.env): string {
  if (env.REELFLOW_STATE_DIR) return resolve(env.REELFLOW_STATE_DIR);
  const xdg = env.XDG_STATE_HOME ? resolve(env.XDG_STATE_HOME) : join(homedir(), '.local', 'state');
  return join(xdg, 'reelflow');
}

/** Creates the directory (and `sub`) and proves it writable, or explains what to do. */
export function ensureWritableDir(dir: string, purpose: string): string {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return dir;
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new TemporalUnavailableError(`the ${purpose} ${dir} is not writable (${reason}): set REELFLOW_STATE_DIR to a writable directory`);
  }
}
