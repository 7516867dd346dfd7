// The kept take of each item (docs/chains.md): a need on an item resolves to the take a person kept
// in `reelflow review`, once there is one, instead of take 1. loadJobFile's `keptTakes` option.
import { baseKeyOf } from '../../jobfile/takes';
import type { ManifestRow } from '../manifest/row';
import type { StandingPicks } from './picks';

/**
 * First-take key -> the key of the kept take, from the manifest and the standing picks: a stored,
 * succeeded render whose standing pick is `keep`. When several takes of an item are kept, the one
 * kept last wins.
 */
export function keptTakes(manifest: readonly ManifestRow[], picks: StandingPicks): Map<string, string> {
  const chosen = new Map<string, { key: string; at: string }>();
  for (const row of manifest) {
    if (row.state !== 'succeeded' || !row.file) continue;
    const pick = picks.of(row);
    if (pick?.verdict !== 'keep') continue;
    const base = baseKeyOf(row.key);
    const before = chosen.get(base);
    if (!before || before.at <= pick.at) chosen.set(base, { key: row.key, at: pick.at });
  }
  return new Map([...chosen].map(([base, { key }]) => [base, key]));
}
