// Takes (docs/takes.md): several renders of one item, each with its own key, output name and seed.
// Take 1 keeps the key and name the item always had, so a job without `variants` is unchanged.
import { createHash } from 'node:crypto';
import { MAX_SEED } from './schema';

/** A take a `run --redo`/`--only` asks for: take number `take` of the item whose take `of` it replaces. */
export interface RedoTake {
  /** The key of the take this one is made for (a rejected or failed take, or the item's latest). */
  of: string;
  take: number;
}

/** Keys of takes after the first end with this; `~` is in no id and no matrix suffix, so no key collides. */
const TAKE_SUFFIX = /~t([1-9][0-9]*)$/;

/** The key of take `take` of the item whose first take has key `base`. */
export function takeKey(base: string, take: number): string {
  return take === 1 ? base : `${base}~t${take}`;
}

/** The first take's key of any take's key. */
export function baseKeyOf(key: string): string {
  return key.replace(TAKE_SUFFIX, '');
}

/** The take number a key names (1 for a key without a take suffix). */
export function takeOfKey(key: string): number {
  const m = TAKE_SUFFIX.exec(key);
  return m ? Number(m[1]) : 1;
}

/**
 * The seed of a take: the user's `seed` for take 1 and the next numbers for later takes, else one
 * derived from the item's first key and the take (sha256, 31 bits) so that takes differ and every
 * run of the same take sends the same seed.
 */
export function takeSeed(base: string, take: number, userSeed?: number): number {
  if (userSeed !== undefined) return (userSeed + take - 1) % (MAX_SEED + 1);
  return createHash('sha256').update(`${base}\u0000${take}`).digest().readUInt32BE(0) & MAX_SEED;
}

/** The output name of a take: a template without `{take}` gets `-t<n>` after takes past the first. */
export function takeOutputName(rendered: string, templateHasTake: boolean, take: number): string {
  return templateHasTake || take === 1 ? rendered : `${rendered}-t${take}`;
}
